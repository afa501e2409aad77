import Testing

@testable import ResourcefulOpenAPI

/// Wire names to Swift names: words split at separators and case changes, keywords escaped,
/// leading digits prefixed.
@Suite struct SwiftNamesTests {
    @Test(arguments: [
        ("listUsers", "ListUsers"), ("list_users", "ListUsers"), ("user-account", "UserAccount"),
        ("HTTPServer", "HttpServer"), ("PetID", "PetId"), ("2fa", "_2fa"), ("", "Value"), ("élan", "Lan"),
    ])
    func typeNames(wire: String, swift: String) {
        #expect(SwiftNames.typeName(wire) == swift)
    }

    @Test(arguments: [
        ("pet_id", "petId"), ("Content-Type", "contentType"), ("X-Request-ID", "xRequestId"), ("default", "`default`"),
        ("self", "`self`"), ("URL", "url"), ("2fa", "_2fa"), ("in", "`in`"),
    ])
    func memberNames(wire: String, swift: String) {
        #expect(SwiftNames.memberName(wire) == swift)
    }

    @Test func caseNamesForValuesWithoutLetters() {
        #expect(SwiftNames.caseName("") == "empty")
        #expect(SwiftNames.caseName("+") == "value2b")
        #expect(SwiftNames.caseName("light-blue") == "lightBlue")
    }
}
