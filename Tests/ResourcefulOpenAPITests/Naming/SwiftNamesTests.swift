import Testing

@testable import ResourcefulOpenAPI

/// Wire names to Swift names: words split at separators and case changes, keywords escaped,
/// leading digits prefixed; letters outside ASCII kept, other characters (a currency sign, a
/// right-to-left override) taken as separators.
@Suite struct SwiftNamesTests {
    @Test(arguments: [
        ("listUsers", "ListUsers"), ("list_users", "ListUsers"), ("user-account", "UserAccount"),
        ("HTTPServer", "HttpServer"), ("PetID", "PetId"), ("2fa", "_2fa"), ("", "Value"), ("élan", "Élan"),
        ("straße_nummer", "StraßeNummer"), ("名前", "名前"),
    ])
    func typeNames(wire: String, swift: String) {
        #expect(SwiftNames.typeName(wire) == swift)
    }

    @Test(arguments: [
        ("pet_id", "petId"), ("Content-Type", "contentType"), ("X-Request-ID", "xRequestId"), ("default", "`default`"),
        ("self", "`self`"), ("URL", "url"), ("2fa", "_2fa"), ("in", "`in`"),
        ("Größe", "größe"), ("ÉCOLE", "école"), ("prix_en_€", "prixEn"), ("a\u{202E}b", "aB"),
    ])
    func memberNames(wire: String, swift: String) {
        #expect(SwiftNames.memberName(wire) == swift)
    }

    @Test func caseNamesForValuesWithoutLetters() {
        #expect(SwiftNames.caseName("") == "empty")
        #expect(SwiftNames.caseName("+") == "value2b")
        #expect(SwiftNames.caseName("light-blue") == "lightBlue")
        #expect(SwiftNames.caseName("é") == "é")
        #expect(SwiftNames.caseName("€") == "value20ac")
    }
}
