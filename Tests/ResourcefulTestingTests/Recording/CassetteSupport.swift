import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting

/// What the recording tests call: a user resource, and secrets that must never reach a file.
enum CassetteFixture {
    struct User: Codable, Sendable, Equatable {
        var id: Int
        var name: String
    }

    struct Login: Codable, Sendable {
        var username: String
        var password: String
    }

    struct Session: Codable, Sendable, Equatable {
        var accessToken: String
        var user: String
    }

    static let token = "Bearer tok-9f8e7d6c5b4a"
    static let password = "hunter2-Pa55word"
    static let accessToken = "at-0123456789abcdef"
    static let apiKey = "key-5ecr3t-query"
    static let cookie = "sid=c00kie-5ecr3t"
    static let secrets = [token, "tok-9f8e7d6c5b4a", password, accessToken, apiKey, cookie, "c00kie-5ecr3t"]

    /// A file in a scratch folder of its own.
    static func scratchFile(_ name: String = "cassette.har") throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cassette-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name)
    }

    /// An API for `baseURL` over `transport`, retrying quickly, with the fixture's token.
    static func api(_ baseURL: URL, _ transport: any HTTPTransport) -> API {
        var config = APIConfig(baseURL: baseURL, service: "cassette")
        config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        let storage = InMemoryAuthenticationStorage(["cassette": token])
        return API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport))
    }

    /// Which of the fixture's secrets `file` holds.
    static func secretsIn(_ file: URL) throws -> [String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        return secrets.filter { text.contains($0) }
    }
}

/// `GET users/404`, whose error body is decoded.
struct ShowMissingUser: ResourceRequest {
    struct Problem: Decodable, Sendable {
        var error: String
    }

    typealias ResourceType = CassetteFixture.User
    typealias ErrorResponse = Problem
    var verb: ResourceVerb { .show }
    var path: ResourcePath { "users/404" }
}
