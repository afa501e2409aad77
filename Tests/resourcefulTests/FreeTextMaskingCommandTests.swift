import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Header values that give a secret name a value in free text (escaped JSON, a separator other
/// than `=`, a scheme-relative URL's userinfo) are masked in what the tool prints: `--curl`, a
/// log line (`-v`) and the response head (`-i`), while the server still receives them as typed.
@Suite struct FreeTextMaskingCommandTests {
    static let secret = "Q7CLISEKRIT"

    @Test func headersThatGiveASecretAValueInTextAreMasked() async throws {
        try await MockServer.withRunning { server in
            var answer = MockResponse.json(raw: #"{"ok": true}"#)
            answer.headerFields[HTTPField.Name("X-Debug")!] = #"data={\"password\":\"\#(Self.secret)\"}"#
            answer.headerFields[HTTPField.Name("X-Next")!] = "see //user:\(Self.secret)@host/x"
            server.stub(.get, "/v1/me", answer, answer, answer)
            let headers = [
                "-H", #"X-Data: data={\"password\":\"\#(Self.secret)\"}"#, "-H", "X-Note: password|\(Self.secret)",
                "-H", "X-Link: see //user:\(Self.secret)@host/x",
            ]
            let curl = try await CurlStyleOptionsTests.tool(server, ["show", "me", "--curl"] + headers)
            #expect(curl.status == 0, "\(curl.output)")
            #expect(curl.output.contains("X-Data: ***"), "\(curl.output)")
            #expect(!curl.output.contains(Self.secret), "\(curl.output)")

            let verbose = try await CurlStyleOptionsTests.tool(server, ["show", "me", "-v", "-i"] + headers)
            #expect(verbose.status == 0, "\(verbose.output)")
            #expect(!verbose.output.contains(Self.secret), "\(verbose.output)")
            #expect(verbose.output.lowercased().contains("x-debug"), "\(verbose.output)")

            let sent = try #require(server.requests.first)
            #expect(sent.headerFields[HTTPField.Name("X-Note")!] == "password|\(Self.secret)")
        }
    }

    /// A secret with a quote, `)` or `>` in it, `:=` after a secret's name, userinfo behind an
    /// escaped `@`: masked whole in `--curl`, `-v` and `-i`.
    @Test func valuesCutShortOrHiddenBehindSeparatorsAreMasked() async throws {
        try await MockServer.withRunning { server in
            var answer = MockResponse.json(raw: #"{"ok": true}"#)
            answer.headerFields[HTTPField.Name("X-Back")!] = #"password=p@ss)w0rd"\#(Self.secret)"#
            answer.headerFields[HTTPField.Name("X-Link")!] = "http://u:\(Self.secret)&#64;h/"
            server.stub(.get, "/v1/me", answer, answer)
            let headers = [
                "-H", #"X-Data: user=bob; password=p@ss)w0rd"\#(Self.secret)"#, "-H", "X-Assign: password:=\(Self.secret)",
                "-H", "X-Prose: password=correct \(Self.secret) battery", "-H", "X-Link: http://u:\(Self.secret)&#64;h/",
            ]
            let curl = try await CurlStyleOptionsTests.tool(server, ["show", "me", "--curl"] + headers)
            #expect(curl.status == 0, "\(curl.output)")
            #expect(!curl.output.contains(Self.secret), "\(curl.output)")
            #expect(curl.output.contains("user=bob; password=***"), "\(curl.output)")
            let verbose = try await CurlStyleOptionsTests.tool(server, ["show", "me", "-v", "-i"] + headers)
            #expect(verbose.status == 0, "\(verbose.output)")
            #expect(!verbose.output.contains(Self.secret), "\(verbose.output)")
        }
    }

    /// A service's own masked names add to the top level's: the top level's credential field
    /// stays masked in the service's cURL export.
    @Test func aServicesMaskedHeadersKeepTheTopLevels() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let extra = #"""
                "baseHeaders": ["X-Cust-Cred: \#(Self.secret)"], "logging": {"maskedHeaders": ["X-Cust-Cred"]},
                "services": {"svc": {"logging": {"maskedHeaders": ["X-Svc-Cred"]}}}
                """#
            let curl = try await CurlStyleOptionsTests.tool(server, ["show", "me", "--curl", "--service", "svc"], extra: extra)
            #expect(curl.status == 0, "\(curl.output)")
            #expect(!curl.output.contains(Self.secret), "\(curl.output)")
            #expect(curl.output.contains("X-Cust-Cred: ***"), "\(curl.output)")
        }
    }
}
