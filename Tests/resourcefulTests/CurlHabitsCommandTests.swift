import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// More of what curl users type: `-d @-`, `--compressed`, `-L`, and curl's options
/// the verbs do not offer (`-X`, `-u`, `-k`, `-I`), refused in words before anything is sent.
@Suite struct CurlHabitsCommandTests {
    @Test func dataFromStandardInputIsSent() async throws {
        try await MockServer.withRunning { server in
            server.stub(.post, "/v1/users", .json(raw: #"{"id": 7}"#))
            let directory = try CurlStyleOptionsTests.configDirectory("\(server.baseURL.absoluteString)/v1")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let result = try await Command.run(
                resourcefulTool, ["create", "users", "-d", "@-", "--env", "test", "--config-directory", directory], input: #"{"name": "Ada", "n": 3}"#)
            #expect(result.status == 0, "\(result.output)")
            let sent = try #require(server.requests.first { $0.path == "/v1/users" })
            let object = try #require(try JSONSerialization.jsonObject(with: sent.body) as? [String: Any])
            #expect(object["name"] as? String == "Ada" && object["n"] as? Int == 3, "\(object)")
            // Not an object: refused as --data @file is, nothing sent.
            let count = server.requests.count
            let refused = try await Command.run(
                resourcefulTool, ["create", "users", "--data", "@-", "--env", "test", "--config-directory", directory], input: "[1, 2]")
            #expect(refused.status == 64 && refused.output.contains("--data must hold a JSON object"), "\(refused.output)")
            #expect(server.requests.count == count)
        }
    }

    @Test func compressedDecompressesWhatTheConfigurationWouldRefuse() async throws {
        // gzip's own output, not one this package made.
        let plain = #"{"n": 42}"#
        let gzipped = try await Command.run(
            "/usr/bin/python3", ["-c", "import base64,gzip,sys; sys.stdout.write(base64.b64encode(gzip.compress(sys.stdin.read().encode())).decode())"],
            input: plain)
        let body = try #require(Data(base64Encoded: gzipped.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/packed", MockResponse(headerFields: [.contentType: "application/json", .contentEncoding: "gzip"], body: body))
            let extra = #""http": {"decompression": false}"#
            let refused = try await CurlStyleOptionsTests.tool(server, ["show", "packed"], extra: extra)
            #expect(refused.status != 0, "\(refused.output)")
            let read = try await CurlStyleOptionsTests.tool(server, ["show", "packed", "--compressed", "-sL"], extra: extra)
            #expect(read.status == 0, "\(read.output)")
            #expect(read.output.contains("42"), "\(read.output)")
            let asked = try #require(server.requests.last)
            #expect(asked.headerFields[.acceptEncoding]?.contains("gzip") == true, "\(asked.headerFields)")
        }
    }

    @Test(arguments: [
        (["create", "users", "-X", "POST"], "-X", "the verb names the method"),
        (["create", "users", "-XPOST"], "-X", "the verb names the method"),
        (["show", "users", "--request=GET"], "--request", "the verb names the method"),
        (["show", "users", "-u", "bob:hunter2"], "-u", "store the credential with 'resourceful login'"),
        (["show", "users", "-ubob:hunter2"], "-u", "store the credential with 'resourceful login'"),
        (["show", "users", "--user=bob:hunter2"], "--user", "store the credential with 'resourceful login'"),
        (["show", "users", "-k"], "-k", "http.tls.caFile"),
        (["show", "users", "-I"], "-I", "-i prints the answer's status line"),
    ])
    func curlsOptionsTheVerbsDoNotOfferAreRefusedInWords(arguments: [String], option: String, advice: String) async throws {
        try await MockServer.withRunning { server in
            let result = try await CurlStyleOptionsTests.tool(server, arguments)
            #expect(result.status == 64, "\(result.output)")
            #expect(result.output.hasPrefix("resourceful: \(option) is curl's, not resourceful's: "), "\(result.output)")
            #expect(result.output.contains(advice), "\(result.output)")
            #expect(!result.output.contains("hunter2"), "the password was written back")
            #expect(server.requests.isEmpty)
        }
    }
}
