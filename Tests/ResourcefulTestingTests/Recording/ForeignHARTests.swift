import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import NIOCore
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// HAR files written and read by software this project did not write: PHP's built-in web server
/// as the upstream, mitmproxy (PyPI) as the recording proxy and as a HAR reader, and haralyzer
/// (PyPI) as a second reader.
@Suite(.serialized) struct ForeignHARTests {
    typealias User = CassetteFixture.User

    /// A small CRUD app on PHP's built-in server (Debian's `php-cli`).
    static let router = #"""
        <?php
        header('Content-Type: application/json');
        $path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
        $method = $_SERVER['REQUEST_METHOD'];
        $body = json_decode(file_get_contents('php://input'), true);
        if ($path === '/users' && $method === 'GET') { echo json_encode([['id' => 1, 'name' => 'Ada'], ['id' => 2, 'name' => 'Grace']]); }
        elseif ($path === '/users' && $method === 'POST') { http_response_code(201); echo json_encode(['id' => 3, 'name' => $body['name']]); }
        elseif ($path === '/users/1' && $method === 'GET') { echo json_encode(['id' => 1, 'name' => 'Ada']); }
        elseif ($path === '/users/1' && $method === 'PUT') { echo json_encode(['id' => 1, 'name' => $body['name']]); }
        elseif ($path === '/users/1' && $method === 'DELETE') { http_response_code(204); }
        else { http_response_code(404); echo json_encode(['error' => 'no such user']); }
        """#

    static func startPHP(in directory: URL) async throws -> BackgroundProcess {
        try router.write(to: directory.appendingPathComponent("router.php"), atomically: true, encoding: .utf8)
        let port = try Nginx.freePort()
        return try await BackgroundProcess(
            "/usr/bin/php", ["-S", "127.0.0.1:\(port)", "-t", directory.path, directory.appendingPathComponent("router.php").path],
            port: port, log: directory.appendingPathComponent("php.log")
        )
    }

    /// The five verbs and a 404, as text to compare.
    static func calls(_ api: API) async throws -> [String] {
        var results: [String] = []
        results.append("index \(try await api.call(AdHocRequest<[User], Empty>(.index, "users")))")
        results.append("show \(try await api.call(AdHocRequest<User, Empty>(.show, "users/1")))")
        results.append("create \(try await api.call(AdHocRequest<User, User>(.create, "users", parameters: User(id: 0, name: "Hedy"))))")
        results.append("update \(try await api.call(AdHocRequest<User, User>(.update, "users/1", parameters: User(id: 1, name: "Ada L."))))")
        _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "users/1"))
        results.append("delete")
        do {
            _ = try await api.call(ShowMissingUser())
        } catch {
            results.append("missing \(error.status?.code ?? 0) \(error.errorResponse(as: ShowMissingUser.Problem.self)?.error ?? "no body")")
        }
        return results
    }

    @Test func aHARWrittenByMitmproxyIsReplayed() async throws {
        let directory = try CassetteFixture.scratchFile().deletingLastPathComponent()
        let har = directory.appendingPathComponent("mitmproxy.har")
        let php = try await Self.startPHP(in: directory)
        let proxyPort = try Nginx.freePort()
        let mitmproxy = try await BackgroundProcess(
            PythonTools.path("mitmdump"),
            ["-q", "--listen-host", "127.0.0.1", "-p", "\(proxyPort)", "--mode", "reverse:http://127.0.0.1:\(php.port)",
             "--set", "hardump=\(har.path)"],
            port: proxyPort, log: directory.appendingPathComponent("mitmproxy.log")
        )
        let baseURL = try #require(URL(string: "http://127.0.0.1:\(proxyPort)"))
        let answered = try await AsyncHTTPClientTransport.withTransport { live in
            try await Self.calls(CassetteFixture.api(baseURL, live))
        }
        // mitmproxy writes the HAR file as it exits.
        await mitmproxy.stop()
        await php.stop()
        #expect(answered.count == 6)
        #expect(answered.last == "missing 404 no such user")

        // mitmproxy names the upstream's origin in its entries: match on path and query alone.
        let replayer = try ReplayingTransport(file: har, matching: RequestMatching(ignoresOrigin: true, body: true))
        let replayed = try await Self.calls(CassetteFixture.api(baseURL, replayer))
        #expect(replayed == answered)
    }

    @Test func aHARWrittenHereIsReadByMitmproxyAndHaralyzer() async throws {
        let directory = try CassetteFixture.scratchFile().deletingLastPathComponent()
        let har = directory.appendingPathComponent("recorded.har")
        let php = try await Self.startPHP(in: directory)
        let baseURL = try #require(URL(string: "http://127.0.0.1:\(php.port)"))
        let answered = try await AsyncHTTPClientTransport.withTransport { live in
            try await Self.calls(CassetteFixture.api(baseURL, try RecordingTransport(live, file: har)))
        }
        await php.stop()
        #expect(answered.count == 6)
        #expect(try CassetteFixture.secretsIn(har) == [])
        // With the server gone, the recording answers the same.
        let replayed = try await Self.calls(CassetteFixture.api(baseURL, try ReplayingTransport(file: har)))
        #expect(replayed == answered)

        // mitmproxy reads HAR files as flows, and prints each.
        let flows = try await Command.run(PythonTools.path("mitmdump"), ["-n", "-r", har.path, "--flow-detail", "1"])
        #expect(flows.status == 0)
        for line in ["GET \(baseURL.absoluteString)/users", "POST \(baseURL.absoluteString)/users", "PUT \(baseURL.absoluteString)/users/1",
                     "DELETE \(baseURL.absoluteString)/users/1", "<< 201 Created", "<< 204 No Content", "<< 404 Not Found"] {
            #expect(flows.output.contains(line), "mitmdump did not read \(line): \(flows.output)")
        }

        // haralyzer reads every entry and its fields.
        let script = """
            import json, sys
            from haralyzer import HarEntry
            log = json.load(open(sys.argv[1]))["log"]
            assert log["version"] == "1.2" and log["creator"]["name"] == "Resourceful"
            for raw in log["entries"]:
                entry = HarEntry(raw)
                print(entry.request.method, entry.request.url, entry.response.status, entry.response.mimeType, entry.startTime.year, len(entry.response.text or ""))
            """
        let read = try await Command.run(PythonTools.path("python"), ["-c", script, har.path])
        #expect(read.status == 0, "\(read.output)")
        let lines = read.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 6)
        #expect(lines.first?.hasPrefix("GET \(baseURL.absoluteString)/users 200 application/json") == true)
        #expect(lines.contains { $0.hasPrefix("DELETE \(baseURL.absoluteString)/users/1 204") })
    }

    @Test func entriesABrowserWritesAreReadAndUnusableOnesLeftOutWithAWarning() async throws {
        let file = try CassetteFixture.scratchFile("browser.har")
        let har = #"""
            {"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"}, "pages": [],
             "entries": [
              {"startedDateTime": "2026-11-01T10:00:00.000Z", "time": 12, "comment": "a login form",
               "request": {"method": "POST", "url": "https://app.example.com/session?next=%2Fhome", "httpVersion": "h2",
                 "headers": [{"name": ":authority", "value": "app.example.com"}, {"name": "content-type", "value": "application/x-www-form-urlencoded"}],
                 "queryString": [{"name": "next", "value": "/home"}], "cookies": [],
                 "postData": {"mimeType": "application/x-www-form-urlencoded", "params": [{"name": "user", "value": "ada"}, {"name": "password", "value": "***"}]}},
               "response": {"status": 200, "statusText": "", "headers": [{"name": ":status", "value": "200"}, {"name": "content-type", "value": "application/json"},
                 {"name": "content-encoding", "value": "br"}],
                 "content": {"size": 11, "mimeType": "application/json", "text": "eyJvayI6dHJ1ZX0=", "encoding": "base64"}}},
              {"startedDateTime": "2026-11-01T10:00:01.000Z", "time": 0,
               "request": {"method": "GET", "url": "https://app.example.com/blocked"},
               "response": {"status": 0, "content": {}}},
              {"request": {"method": "GET", "url": "https://app.example.com/broken"},
               "response": {"status": 200, "content": {"text": "%%%", "encoding": "base64"}}},
              {"request": {"method": "GET", "url": "https://app.example.com/bare"}, "response": {"status": 204}}
             ]}}
            """#
        try Data(har.utf8).write(to: file)
        let logs = InMemoryLogHandler()
        let replayer = try ReplayingTransport(
            file: file, matching: RequestMatching(body: true), logger: Logger(label: "test") { _ in logs }
        )
        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 2)
        #expect(warnings.map { "\($0.metadata["reason"] ?? "")" }.sorted() == ["status 0 is no answer", "the response body is not valid base64"])

        var login = TransportRequest(
            method: .post, url: "https://app.example.com/session?next=%2Fhome", body: ByteBuffer(string: "password=s3cret&user=ada"),
            deadline: .now + .seconds(5), maxResponseBytes: 1000
        )
        login.headerFields[.contentType] = "application/x-www-form-urlencoded"
        let answer = try await replayer.send(login)
        #expect(answer.status == .ok)
        #expect(String(buffer: answer.body.bytes ?? ByteBuffer()) == #"{"ok":true}"#)
        // The body is kept decoded: the encoding it arrived in no longer applies.
        #expect(answer.headerFields[.contentEncoding] == nil)
        let bare = try await replayer.send(TransportRequest(method: .get, url: "https://app.example.com/bare", deadline: .now + .seconds(5), maxResponseBytes: 10))
        #expect(bare.status == .noContent)
        #expect(bare.body.isEmpty)
    }
}
