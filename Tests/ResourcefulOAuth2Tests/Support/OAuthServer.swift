import Foundation
import ProcessTestSupport
import Testing

/// django-oauth-toolkit under waitress (`Tests/Support/PythonServers/oauth_server`), started once
/// per suite, with a P-256 key pair made for the `jwt-client` and a request log.
final class OAuthServer: Sendable {
    /// The clients the server knows (its README lists them).
    static let serviceClient = (id: "service-client", secret: "service-secret")
    static let tvClient = (id: "tv-client", secret: "tv-secret")
    static let deviceClient = "device-client"
    static let jwtClient = "jwt-client"
    static let user = (name: "alice", password: "alice-password")

    let server: PythonServer
    let directory: URL
    /// The private key of `jwt-client`, PEM.
    let privateKeyFile: String

    var baseURL: URL { server.baseURL }
    var issuer: String { "http://127.0.0.1:\(server.port)" }
    var tokenEndpoint: String { "\(issuer)/o/token/" }
    private var logFile: URL { directory.appendingPathComponent("requests.jsonl") }

    private init(server: PythonServer, directory: URL, privateKeyFile: String) {
        self.server = server
        self.directory = directory
        self.privateKeyFile = privateKeyFile
    }

    /// Starts a server; `options` are `serve.py`'s (`--access-token-expires 2`).
    static func start(_ options: [String] = []) async throws -> OAuthServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oauth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("jwt-client.pem").path
        let publicKey = directory.appendingPathComponent("jwt-client.pub.pem").path
        for arguments in [
            ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key],
            ["pkey", "-in", key, "-pubout", "-out", publicKey],
        ] {
            let result = try await Command.run("/usr/bin/openssl", arguments)
            guard result.status == 0 else { throw Command.Failed(result: result) }
        }
        let log = directory.appendingPathComponent("requests.jsonl").path
        let server = try await PythonServer(
            "oauth_server/serve.py", ["--request-log", log, "--jwt-public-key", publicKey, "--device-interval", "1"] + options
        )
        return OAuthServer(server: server, directory: directory, privateKeyFile: key)
    }

    func stop() async {
        await server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// One line of the request log.
    struct LogLine: Decodable {
        var endpoint: String?
        var status: Int?
        var client_id: String?
        var client_auth: String?
        var grant_type: String?
        var error: String?
    }

    /// The log's lines so far (a line is written once its response is made).
    func log() -> [LogLine] {
        guard let data = try? Data(contentsOf: logFile) else { return [] }
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONDecoder().decode(LogLine.self, from: Data($0)) }
    }

    /// The token requests logged so far.
    func tokenRequests() -> [LogLine] {
        log().filter { $0.endpoint == "token" }
    }

    /// The raw log, to search for secrets.
    func logText() -> String {
        (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
    }

    /// Approves (or denies) `userCode` as the user would: signs in through Django's form, enters
    /// the code on the device page and answers the consent form, with curl and a cookie jar.
    func approveDevice(userCode: String, accept: Bool = true) async throws {
        let jar = directory.appendingPathComponent("cookies-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: jar) }
        _ = try await curl(jar, ["\(issuer)/accounts/login/"])
        _ = try await curl(jar, ["\(issuer)/accounts/login/", "--data-urlencode", "csrfmiddlewaretoken=\(csrf(jar))",
            "--data-urlencode", "username=\(Self.user.name)", "--data-urlencode", "password=\(Self.user.password)"])
        let entered = try await curl(jar, ["\(issuer)/o/device/", "-o", "/dev/null", "-w", "%{redirect_url}",
            "--data-urlencode", "csrfmiddlewaretoken=\(csrf(jar))", "--data-urlencode", "user_code=\(userCode)"])
        guard entered.contains("/o/device-confirm/") else { throw Approval.failed("the device page did not take the code") }
        let confirmed = try await curl(jar, [entered, "-o", "/dev/null", "-w", "%{http_code}",
            "--data-urlencode", "csrfmiddlewaretoken=\(csrf(jar))", "--data-urlencode", "action=\(accept ? "accept" : "deny")"])
        guard confirmed == "302" else { throw Approval.failed("the consent form answered \(confirmed)") }
    }

    enum Approval: Error { case failed(String) }

    /// Approves (or denies) the authorization request `url` as the user would in a browser:
    /// signs in, submits the consent form with the request's parameters, and follows the
    /// redirect to the app's loopback address.
    func approveAuthorization(_ url: URL, accept: Bool = true) async throws {
        let jar = directory.appendingPathComponent("cookies-\(UUID().uuidString).txt").path
        defer { try? FileManager.default.removeItem(atPath: jar) }
        _ = try await curl(jar, ["\(issuer)/accounts/login/"])
        _ = try await curl(jar, ["\(issuer)/accounts/login/", "--data-urlencode", "csrfmiddlewaretoken=\(csrf(jar))",
            "--data-urlencode", "username=\(Self.user.name)", "--data-urlencode", "password=\(Self.user.password)"])
        var form = ["--data-urlencode", "csrfmiddlewaretoken=\(csrf(jar))"]
        for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [] {
            form += ["--data-urlencode", "\(item.name)=\(item.value ?? "")"]
        }
        if accept { form += ["--data-urlencode", "allow=Authorize"] }
        let location = try await curl(jar, ["\(issuer)/o/authorize/", "-o", "/dev/null", "-w", "%{redirect_url}"] + form)
        guard location.hasPrefix("http://127.0.0.1:") else { throw Approval.failed("the consent form did not redirect to the app") }
        _ = try await curl(jar, [location])
    }

    /// Revokes `token` as `service-client` (RFC 7009).
    func revoke(_ token: String) async throws {
        let result = try await Command.run("/usr/bin/curl", [
            "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-u", "\(Self.serviceClient.id):\(Self.serviceClient.secret)",
            "--data-urlencode", "token=\(token)", "\(issuer)/o/revoke_token/",
        ])
        guard result.status == 0, result.output == "200" else { throw Approval.failed("revocation answered \(result.output)") }
    }

    /// The token endpoint's `error` for a refresh with `refreshToken` by the public client
    /// `clientID`, or `nil` when it gave a token.
    func refreshError(_ refreshToken: String, clientID: String) async throws -> String? {
        let result = try await Command.run("/usr/bin/curl", [
            "-sS", "--data-urlencode", "grant_type=refresh_token", "--data-urlencode", "refresh_token=\(refreshToken)",
            "--data-urlencode", "client_id=\(clientID)", tokenEndpoint,
        ])
        struct Answer: Decodable { var error: String?; var access_token: String? }
        let answer = try JSONDecoder().decode(Answer.self, from: Data(result.output.utf8))
        return answer.access_token == nil ? (answer.error ?? "no error") : nil
    }

    private func curl(_ jar: String, _ arguments: [String]) async throws -> String {
        let result = try await Command.run("/usr/bin/curl", ["-sS", "-b", jar, "-c", jar] + arguments)
        guard result.status == 0 else { throw Command.Failed(result: result) }
        return result.output
    }

    /// The current `csrftoken` cookie of `jar`.
    private func csrf(_ jar: String) -> String {
        let text = (try? String(contentsOfFile: jar, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count >= 7, fields[5] == "csrftoken" { return String(fields[6]) }
        }
        return ""
    }

    /// The user code in the login command's prompt: the word after "enter the code".
    static func userCode(in prompt: String) -> String? {
        guard let range = prompt.range(of: "enter the code ") else { return nil }
        return prompt[range.upperBound...].split(separator: " ").first.map(String.init)
    }

    /// The suite's server (``OAuthServerTrait``).
    @TaskLocal static var current: OAuthServer?
}

/// Starts an ``OAuthServer`` once around a whole suite.
struct OAuthServerTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let server = try await OAuthServer.start()
        do {
            try await OAuthServer.$current.withValue(server) { try await function() }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

extension Trait where Self == OAuthServerTrait {
    /// The OAuth 2 server, started once for the suite.
    static var oauthServer: OAuthServerTrait { OAuthServerTrait() }
}
