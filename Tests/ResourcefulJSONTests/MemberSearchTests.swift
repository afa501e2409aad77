import Foundation
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// The member search across the objects of one document: what it learns from one object (the key
/// that converted to a name, where the next key is likely to be) must never change what it finds
/// in the next, whose keys may be in another order, repeated, escaped, or other spellings of the
/// same name. Lists of such objects are decoded with `JSONDecoder` and `FastJSONDecoder` and must
/// agree, under the default keys and `convertFromSnakeCase`.
@Suite struct MemberSearchTests {
    /// Twelve members asked for in an order of their own (the coding keys'), none the properties'.
    struct Wide: Codable, Equatable {
        var alpha, beta, gamma, delta, epsilon, zeta, eta, theta, iota, kappa, userId, createdAt: Int?

        enum CodingKeys: String, CodingKey {
            case kappa, alpha, userId, beta, gamma, createdAt, delta, epsilon, zeta, eta, theta, iota
        }
    }

    /// Keys of the members, some naming the same property under one strategy or the other
    /// (`user_id`, `userId`, `user__id`), one escaped, some unknown.
    static let keys = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
        "user_id", "userId", "user__id", "created_at", "createdAt", "CREATED_AT", "_created_at",
        "extra_one", "extra_two", #"al\u0070ha"#, "k_appa", "kappa_", "Kappa",
    ]

    static func list(_ random: inout SeededRandomNumberGenerator) -> Data {
        let objects = (0..<1 + Int(random.next() % 6)).map { _ in
            let members = (0..<Int(random.next() % 16)).map { _ in
                let key = keys[Int(random.next() % UInt64(keys.count))]
                // Now and then a value of the wrong type, so that errors must agree too.
                let value = random.next() % 40 == 0 ? "\"text\"" : String(random.next() % 1000)
                return "\"\(key)\":\(value)"
            }
            return "{" + members.joined(separator: ",") + "}"
        }
        return Data(("[" + objects.joined(separator: ",") + "]").utf8)
    }

    @Test(arguments: [KeyStrategy.defaultKeys, .snakeCase])
    func listsOfObjectsAgree(strategy: KeyStrategy) async {
        var random = SeededRandomNumberGenerator(seed: strategy == .snakeCase ? 71 : 72)
        var compare = DecoderComparison()
        if strategy == .snakeCase { compare.keys = .convertFromSnakeCase }
        for round in 0..<600 {
            if round % 50 == 0 { await Task.yield() }
            compare.expectAgreement([Wide].self, Self.list(&random))
        }
    }

    /// The same list in one order and then another: the second object finds its members where
    /// the first had none, and the other way round.
    @Test func objectsInOtherOrdersAgree() {
        var compare = DecoderComparison()
        let forward = Self.keys.enumerated().map { "\"\($1)\":\($0)" }
        let backward = Array(forward.reversed())
        for keys: JSONDecoder.KeyDecodingStrategy in [.useDefaultKeys, .convertFromSnakeCase] {
            compare.keys = keys
            let document = "[{\(forward.joined(separator: ","))},{\(backward.joined(separator: ","))},{\(forward.joined(separator: ","))}]"
            compare.expectAgreement([Wide].self, document)
        }
    }

    /// Names and keys that are the same string in another spelling (canonical equivalence), as
    /// `JSONDecoder` finds them: a composed and a decomposed `é`, the Kelvin sign and `K`.
    struct Spellings: Codable, Equatable {
        var café: Int?
        var kelvin: Int?
        var plainK: Int?

        enum CodingKeys: String, CodingKey {
            case café
            case kelvin = "\u{212A}elvin"
            case plainK = "K"
        }
    }

    @Test func keysInOtherSpellingsOfTheSameStringAgree() {
        var compare = DecoderComparison()
        let documents = [
            "{\"caf\u{E9}\":1}", "{\"cafe\u{301}\":1}", #"{"cafe\u0301":1}"#, "{\"cafe\u{301}\":1,\"caf\u{E9}\":2}",
            #"{"Kelvin":1,"K":2}"#, "{\"\u{212A}elvin\":1,\"\u{212A}\":2}", "{\"\u{212A}\":2,\"K\":3}",
        ]
        for keys: JSONDecoder.KeyDecodingStrategy in [.useDefaultKeys, .convertFromSnakeCase] {
            compare.keys = keys
            for document in documents {
                compare.expectAgreement(Spellings.self, document)
            }
        }
    }

    /// A name with a character (the Kelvin sign) that an ASCII key's conversion can equal, and
    /// keys before it that ASCII byte checks would pass over.
    struct KelvinName: Codable, Equatable {
        var value: Int?

        enum CodingKeys: String, CodingKey {
            case value = "x\u{212A}y"
        }
    }

    @Test func aNameOutsideASCIIFindsTheFirstKeyThatConvertsToIt() {
        var compare = DecoderComparison()
        compare.keys = .convertFromSnakeCase
        for document in [
            #"{"xKy":1,"x__Ky":2}"#, #"{"x_ky":1,"x__Ky":2}"#, #"{"x__ky":1,"x__Ky":2}"#, "{\"x\u{212A}y\":1,\"xKy\":2}",
        ] {
            compare.expectAgreement(KelvinName.self, document)
        }
        compare.expectAgreement([KelvinName].self, #"[{"x__Ky":1,"xKy":2},{"xKy":3},{"xKy":5,"x__Ky":6}]"#)
    }

    enum KeyStrategy: CustomTestStringConvertible {
        case defaultKeys, snakeCase

        var testDescription: String { self == .snakeCase ? "convertFromSnakeCase" : "default keys" }
    }
}
