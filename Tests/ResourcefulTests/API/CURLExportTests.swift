import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// `api.curl(for:)`: the printed command, run by the real `curl`, sends the request the API
/// sends, with every masked value masked.
@Suite struct CURLExportTests {
    struct Signup: ResourceRequest {
        typealias ResourceType = Empty
        struct Parameters: Encodable, Sendable { var name: String; var password: String; var tags: [String] }
        struct Query: Encodable, Sendable { var apiKey: String; var expand: [String] }
        let verb = ResourceVerb.create
        let path: ResourcePath = "users"
        var parameters = Parameters(name: "Ada O'Brien", password: "pa55-5ecr3t", tags: ["a", "b c"])
        var query = Query(apiKey: "qk-5ecr3t", expand: ["team"])
        var bodyEncoding: BodyEncoding
        var headers: [String: String] { ["X-Api-Key": "hk-5ecr3t", "X-Trace": "t'1"] }
    }

    static let secrets = ["test-token-5f2c9d", "pa55-5ecr3t", "qk-5ecr3t", "hk-5ecr3t"]

    /// Runs `command` with bash and returns what the server recorded of it.
    private func run(_ command: String, _ server: MockServer) async throws -> RecordedRequest {
        let before = server.requests.count
        let result = try await Command.run("/bin/bash", ["-c", command + " --silent --show-error --output /dev/null"])
        #expect(result.status == 0, "\(result.output)")
        #expect(server.requests.count == before + 1)
        return try #require(server.requests.last)
    }

    @Test(arguments: [BodyEncoding.json, .formURLEncoded])
    func theCommandSendsWhatTheAPISendsWithSecretsMasked(encoding: BodyEncoding) async throws {
        try await Harness.run { harness in
            harness.server.route(.post, "/v1/users") { _ in .status(.noContent) }
            let request = Signup(bodyEncoding: encoding)
            let command = try await harness.api.curl(for: request)
            for secret in Self.secrets { #expect(!command.contains(secret)) }
            #expect(command.hasPrefix("curl --request POST '\(harness.server.baseURL.absoluteString)/v1/users?apiKey=***&expand%5B%5D=team'"))
            #expect(command.contains("--header 'Authorization: ***'"))

            _ = try await harness.api.call(request)
            let sent = try #require(harness.server.requests.last)
            let replayed = try await run(command, harness.server)
            #expect(replayed.method == sent.method)
            #expect(replayed.path == sent.path)
            #expect(replayed.query == sent.query.replacingOccurrences(of: "qk-5ecr3t", with: "***"))
            for name in ["Accept", "User-Agent", "Content-Type", "X-Trace"] {
                let field = try #require(HTTPField.Name(name))
                #expect(replayed.headerFields[field] == sent.headerFields[field], "\(name)")
            }
            #expect(replayed.headerFields[.authorization] == "***")
            #expect(replayed.headerFields[HTTPField.Name("X-Api-Key")!] == "***")
            if encoding == .json {
                let body = try #require(try JSONSerialization.jsonObject(with: replayed.body) as? [String: Any])
                let original = try #require(try JSONSerialization.jsonObject(with: sent.body) as? [String: Any])
                #expect(body["name"] as? String == "Ada O'Brien")
                #expect(body["tags"] as? [String] == original["tags"] as? [String])
                #expect(body["password"] as? String == "***")
            } else {
                #expect(replayed.bodyText == sent.bodyText.replacingOccurrences(of: "pa55-5ecr3t", with: "***"))
            }
        }
    }

    @Test func aBodyThatIsNotTextIsLeftOutWithANote() async throws {
        struct Upload: ResourceRequest {
            typealias ResourceType = Empty
            struct Parameters: Encodable, Sendable { var file: MultipartFile }
            let verb = ResourceVerb.create
            let path: ResourcePath = "files"
            let parameters = Parameters(file: MultipartFile(filename: "b.bin", data: Data([0, 255, 254, 0])))
            var bodyEncoding: BodyEncoding { .multipart }
        }
        try await Harness.run { harness in
            let command = try await harness.api.curl(for: Upload())
            #expect(command.hasPrefix("# The body ("))
            #expect(command.contains("--data-binary @request-body.bin"))
        }
    }
}
