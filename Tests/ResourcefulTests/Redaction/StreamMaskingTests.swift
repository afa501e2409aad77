import Foundation
import Resourceful
import Testing

/// Event streams and JSON Lines masked for recordings: every line kept is one the rules can
/// vouch for.
@Suite struct StreamMaskingTests {
    let redactor = Redactor(settings: APIConfig.LogSettings())

    func masked(_ text: String, _ type: String) -> String? {
        redactor.maskedBody(Data(text.utf8), contentType: type).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func dataLinesAreMaskedAndCommentsEmptied() {
        let text = "id: 1\r\nevent: tick\r\nretry: 50\r\n: token hunter2\r\ndata: {\"password\":\"hunter2\",\"n\":1}\r\n\r\n"
        let result = masked(text, "text/event-stream")
        #expect(result == "id: 1\nevent: tick\nretry: 50\n:\ndata: {\"password\":\"***\",\"n\":1}\n\n")
    }

    @Test func idAndEventValuesAreMaskedAsText() {
        let text = "id: https://u:hunter2@h.example/?n=1\nevent: password=hunter2\ndata: {}\n\n"
        #expect(masked(text, "text/event-stream") == "id: https://***@h.example/?n=1\nevent: password=***\ndata: {}\n\n")
    }

    /// A body, named in test output by what it shows rather than by its text (which holds a
    /// fake secret).
    struct Body: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var testDescription: String { name }
    }

    @Test(arguments: [
        Body(name: "CR line ends", text: "id: 1\rdata: {\"password\":\"hunter2\"}\r\r"),
        Body(name: "a leading BOM", text: "\u{FEFF}data: {\"password\":\"hunter2\"}\n\n"),
    ])
    func everyLineEndAndALeadingBOMAreReadAsTheRulesSay(_ body: Body) {
        let text = body.text
        let result = masked(text, "text/event-stream")
        let clean = result?.contains("hunter2") == false
        let replaced = result?.contains("\"password\":\"***\"") == true
        #expect(clean)
        #expect(replaced)
    }

    @Test(arguments: [
        Body(name: "an unknown field", text: "token: hunter2\ndata: {}\n\n"),
        Body(name: "data that is not JSON", text: "data: hunter2\n\n"),
        Body(name: "retry that is not digits", text: "retry: 1x\n\n"),
        Body(name: "JSON cut short", text: "data: {\"password\":\"hunt"),
    ])
    func aLineTheRulesCannotVouchForLeavesTheBodyOut(_ body: Body) {
        let text = body.text
        // Compared outside the expectation: a failure must not print the fake secret.
        let leftOut = masked(text, "text/event-stream") == nil
        #expect(leftOut)
    }

    @Test func jsonLinesAreMaskedLineByLine() {
        #expect(masked("{\"password\":\"a\"}\r\n\n{\"n\":2}", "application/x-ndjson") == "{\"password\":\"***\"}\r\n\n{\"n\":2}")
        let leftOut = masked("{\"n\":1}\nnot json hunter2\n", "application/jsonl") == nil
        #expect(leftOut)
    }
}
