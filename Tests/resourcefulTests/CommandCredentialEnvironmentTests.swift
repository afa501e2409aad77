import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// Where the environment, not the command line, would decide where a credential the command adds
/// goes or what it is sent over: a variable a parent process left twice, a call without a
/// configuration file, a base URL a variable moved off the file's. Refused before anything is sent.
@Suite struct CommandCredentialEnvironmentTests {
    typealias Variables = CommandCredentialVariablesTests

    /// Runs the tool with `arguments` in an environment of the test process's variables (less
    /// the ones these tests set) and `entries`, exactly as given: a name may appear twice, as a
    /// parent process can leave it (`execve` takes a list, not a dictionary).
    static func runWithEntries(_ entries: [String], _ arguments: [String]) async throws -> Command.Result {
        let script = """
            import ctypes, os, sys
            names = {"SSL_CERT_FILE", "SSL_CERT_DIR", "http_proxy", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY",
                     "RESOURCEFUL_BASE_URL", "RESOURCEFUL_CONFIG_DIR", "RESOURCEFUL_HTTP_PROXY"}
            split = sys.argv.index("--")
            entries, argv = sys.argv[1:split], sys.argv[split + 1:]
            env = [f"{k}={v}" for k, v in os.environ.items() if k not in names] + entries
            libc = ctypes.CDLL(None, use_errno=True)
            strings = lambda items: (ctypes.c_char_p * (len(items) + 1))(*[x.encode() for x in items], None)
            libc.execve(argv[0].encode(), strings(argv), strings(env))
            sys.exit(f"execve failed: {ctypes.get_errno()}")
            """
        return try await Command.run("/usr/bin/python3", ["-c", script] + entries + ["--", resourcefulTool] + arguments)
    }

    @Test func aVariableLeftTwiceIsCheckedAsTheTransportReadsIt() async throws {
        try await TestPKI.withScratchCA { pki in
            try await MockServer.withRunning { server in
                server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let folder = try Variables.folder(base: "\(server.baseURL.absoluteString)/v1")
                defer { try? FileManager.default.removeItem(at: folder) }
                let arguments = ["show", "me", "-H", "Authorization: Bearer typed-token-2d9", "--env", "x", "--config-directory", folder.path]
                // The C library (and OpenSSL) reads the first; Foundation's copy keeps the last.
                let refused = try await Self.runWithEntries(
                    ["SSL_CERT_FILE=\(pki.caFile)", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"], arguments
                )
                #expect(refused.status == 5, "\(refused.output)")
                #expect(refused.output.contains("SSL_CERT_FILE"), "\(refused.output)")
                #expect(!refused.output.contains("typed-token") && !refused.output.contains(pki.caFile))
                #expect(server.requests.isEmpty, "a request carrying the credential was sent")
            }
        }
        // A proxy named first and emptied after: the transport would go through it.
        try await MockServer.withRunning { proxy in
            let folder = try Variables.folder(base: "http://api.example.invalid/v1")
            defer { try? FileManager.default.removeItem(at: folder) }
            let refused = try await Self.runWithEntries(
                ["http_proxy=\(proxy.baseURL.absoluteString)", "http_proxy="],
                ["show", "me", "-H", "Authorization: Bearer typed-token-2d9", "--env", "x", "--config-directory", folder.path]
            )
            #expect(refused.status == 5, "\(refused.output)")
            #expect(refused.output.contains("http_proxy"), "\(refused.output)")
            #expect(proxy.requests.isEmpty, "the proxy saw a request")
        }
    }

    /// Without a configuration file, the command's credential meets the checks a file's meets.
    @Test func withoutAFileTheCommandsCredentialMeetsTheSameChecks() async throws {
        try await TestPKI.withScratchCA { pki in
            try await MockServer.withRunning { proxy in
                let empty = FileManager.default.temporaryDirectory.appendingPathComponent("command-no-file-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: empty) }
                let remote = ["--base-url", "http://api.example.invalid/v1", "--config-directory", empty.path]
                let cases: [(variable: String, value: String, base: [String])] = [
                    ("SSL_CERT_FILE", pki.caFile, ["--base-url", "https://api.example.invalid/v1", "--config-directory", empty.path]),
                    ("SSL_CERT_DIR", pki.directory.path, ["--base-url", "https://api.example.invalid/v1", "--config-directory", empty.path]),
                    ("http_proxy", proxy.baseURL.absoluteString, remote),
                    ("RESOURCEFUL_HTTP_PROXY", proxy.baseURL.absoluteString, remote),
                ]
                for (variable, value, base) in cases {
                    for credential in Variables.credentials {
                        let refused = try await Self.runWithEntries(["\(variable)=\(value)"], ["show", "me"] + credential + base)
                        #expect(refused.status == 5, "\(variable) \(credential): \(refused.output)")
                        #expect(refused.output.contains(variable) && refused.output.contains("configuration file"), "\(refused.output)")
                        #expect(!refused.output.contains("typed-token") && !refused.output.contains(value))
                    }
                }
                #expect(proxy.requests.isEmpty, "the proxy saw a request")
                // The system's store is taken: the call is made (and fails to connect, exit 7).
                let system = try await Self.runWithEntries(
                    ["SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
                    ["show", "me", "-H", "Authorization: Bearer typed-token-7c1", "--base-url", "https://127.0.0.1:9/v1", "--config-directory", empty.path]
                )
                #expect(system.status != 5, "\(system.output)")
            }
        }
    }

    /// A base URL a variable moved off the configuration file's origin gets no credential the
    /// command adds: the user chose the file, not the variable. `--base-url` names it.
    @Test func aBaseURLAVariableMovedGetsNoCredentialTheCommandAdds() async throws {
        try await MockServer.withRunning { own in
            try await MockServer.withRunning { other in
                other.stub(.get, "/v1/me", .json(raw: #"{"ok": 1}"#), .json(raw: #"{"ok": 2}"#))
                let folder = try Variables.folder(base: "\(own.baseURL.absoluteString)/v1")
                defer { try? FileManager.default.removeItem(at: folder) }
                let moved = "\(other.baseURL.absoluteString)/v1"
                let header = ["-H", "Authorization: Bearer typed-token-5e3"]
                let refused = try await Variables.run(folder, ["show", "me"] + header, environment: ["RESOURCEFUL_BASE_URL": moved])
                #expect(refused.status == 5, "\(refused.output)")
                #expect(refused.output.contains("RESOURCEFUL_BASE_URL") && refused.output.contains("--base-url"), "\(refused.output)")
                #expect(!refused.output.contains("typed-token"))
                #expect(other.requests.isEmpty, "the moved base URL got the credential")
                // Without a credential the variable is taken; named on the command line, the URL gets it.
                let anonymous = try await Variables.run(folder, ["show", "me"], environment: ["RESOURCEFUL_BASE_URL": moved])
                #expect(anonymous.status == 0, "\(anonymous.output)")
                let flagged = try await Variables.run(folder, ["show", "me", "--base-url", moved] + header, environment: [:])
                #expect(flagged.status == 0, "\(flagged.output)")
                #expect(other.requests.map { $0.headerFields[.authorization] } == [nil, "Bearer typed-token-5e3"])
                #expect(own.requests.isEmpty)
            }
        }
    }
}
