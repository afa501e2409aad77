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
}
