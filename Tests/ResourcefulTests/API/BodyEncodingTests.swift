import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct BodyEncodingTests {
    struct Credentials: Encodable, Sendable { var username: String; var scopes: [String] }
    struct Upload: Encodable, Sendable { var title: String; var file: MultipartFile }

    @Test func formURLEncodedBody() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/token", .json(raw: #"{"ok":"yes"}"#))
            let request = AdHocRequest<[String: String], Credentials>(
                .create, "token", parameters: Credentials(username: "a&b c", scopes: ["read", "write"]), bodyEncoding: .formURLEncoded
            )
            _ = try await harness.api.call(request)
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.headerFields[.contentType] == "application/x-www-form-urlencoded")
            #expect(recorded.bodyText == "username=a%26b%20c&scopes%5B%5D=read&scopes%5B%5D=write")
        }
    }

    @Test func multipartBodyWithAFile() async throws {
        try await Harness.run { harness in
            harness.server.stub(.post, "/v1/uploads", .status(.created))
            let bytes = Data([0x00, 0xFF, 0x0D, 0x0A, 0x41])
            let upload = Upload(title: "Q\"3\" report", file: MultipartFile(filename: "r.bin", contentType: "application/pdf", data: bytes))
            _ = try await harness.api.call(AdHocRequest<Empty, Upload>(.create, "uploads", parameters: upload, bodyEncoding: .multipart))
            let recorded = try #require(harness.server.requests.first)
            let contentType = try #require(recorded.headerFields[.contentType])
            #expect(contentType.hasPrefix("multipart/form-data; boundary="))
            let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
            var expected = Data()
            expected.append(contentsOf: Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nQ\"3\" report\r\n".utf8))
            expected.append(contentsOf: Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r.bin\"\r\n".utf8))
            expected.append(contentsOf: Array("Content-Type: application/pdf\r\n\r\n".utf8))
            expected.append(bytes)
            expected.append(contentsOf: Array("\r\n--\(boundary)--\r\n".utf8))
            #expect(recorded.body == expected)
        }
    }

    @Test func perRequestEncoderAndDecoder() async throws {
        struct SnakeRequest: ResourceRequest {
            typealias ResourceType = Echo
            struct Parameters: Encodable, Sendable { var firstName: String }
            let verb = ResourceVerb.create
            let path: ResourcePath = "echo"
            let parameters = Parameters(firstName: "Ada")
            var requestEncoder: (any RequestEncoder)? {
                let encoder = JSONEncoder()
                encoder.keyEncodingStrategy = .convertToSnakeCase
                return encoder
            }
            var responseDecoder: (any ResponseDecoder)? {
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .convertFromSnakeCase
                return decoder
            }
        }
        struct Echo: Decodable, Sendable { var firstName: String }
        try await Harness.run { harness in
            harness.server.route(.post, "/v1/echo") { request in .json(raw: request.body) }
            let echo = try await harness.api.call(SnakeRequest())
            #expect(harness.server.requests.first?.bodyText == #"{"first_name":"Ada"}"#)
            #expect(echo.firstName == "Ada")
        }
    }

    @Test func configuredStrategiesApplyToBodiesAndQueries() async throws {
        struct Event: Codable, Sendable, Equatable { var startsAt: Date }
        try await Harness.run(configure: { $0.coding = .init(keyStrategy: .snakeCase, dateStrategy: .secondsSince1970) }) { harness in
            let config = harness.dependencies.apiConfig
            harness.dependencies.requestEncoder = JSONEncoder(coding: config.coding)
            harness.dependencies.responseDecoder = JSONDecoder(coding: config.coding)
            harness.server.route(.post, "/v1/events") { request in .json(raw: request.body) }
            harness.server.stub(.get, "/v1/events", .json(raw: "[]"))
            let event = Event(startsAt: Date(timeIntervalSince1970: 1_000))
            let echoed = try await harness.api.call(AdHocRequest<Event, Event>(.create, "events", parameters: event))
            _ = try await harness.api.call(AdHocRequest<[Event], Event>(.index, "events", parameters: event))
            #expect(echoed == event)
            #expect(harness.server.requests[0].bodyText == #"{"starts_at":1000}"#)
            #expect(harness.server.requests[1].query == "starts_at=1000")
        }
    }
}
