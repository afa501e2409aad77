import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// How replayed requests find their recordings. Recorded through a stub network that echoes
/// what it was sent: these tests are of matching alone.
@Suite struct RequestMatchingTests {
    private static let base = "http://127.0.0.1:9"

    private func request(
        _ pathAndQuery: String,
        method: HTTPRequest.Method = .get,
        fields: HTTPFields = [:],
        json: String? = nil
    ) -> TransportRequest {
        var fields = fields
        if json != nil { fields[.contentType] = "application/json" }
        return TransportRequest(
            method: method, url: Self.base + pathAndQuery, headerFields: fields, body: json.map { ByteBuffer(string: $0) },
            deadline: .now + .seconds(5), maxResponseBytes: 1 << 20
        )
    }

    /// A cassette holding `requests`, each answered with its position.
    private func record(_ requests: [TransportRequest]) async throws -> URL {
        let file = try CassetteFixture.scratchFile()
        let counter = Locked(0)
        let network = StubTransport { _ in
            let number = counter.withLock { value in
                value += 1
                return value
            }
            return TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: ByteBuffer(string: "\(number)"))
        }
        let recorder = try RecordingTransport(network, file: file)
        for request in requests { _ = try await recorder.send(request) }
        return file
    }

    private func answer(_ replayer: ReplayingTransport, _ request: TransportRequest) async throws -> String {
        String(buffer: try await replayer.send(request).body.bytes ?? ByteBuffer())
    }

    @Test func queryPairsMatchInAnyOrderAndMaskedValuesMatchAnyValue() async throws {
        let file = try await record([request("/search?b=2&a=1&token=\(CassetteFixture.apiKey)")])
        #expect(try CassetteFixture.secretsIn(file) == [])
        let replayer = try ReplayingTransport(file: file)
        #expect(try await answer(replayer, request("/search?a=1&token=another-value&b=2")) == "1")
    }

    /// The cassette's refusal of what `send` asked: the error under the transport's failure, or
    /// `nil` when it answered.
    func refusal(_ send: () async throws -> TransportResponse) async -> CassetteError? {
        do {
            _ = try await send()
            return nil
        } catch let error as TransportError {
            return error.underlying as? CassetteError
        } catch {
            return nil
        }
    }

    @Test func identicalRequestsAreAnsweredInRecordedOrderEachOnce() async throws {
        let file = try await record([request("/users/1"), request("/users", method: .post, json: "{}"), request("/users/1")])
        let replayer = try ReplayingTransport(file: file)
        #expect(try await answer(replayer, request("/users/1")) == "1")
        #expect(try await answer(replayer, request("/users", method: .post, json: "{}")) == "2")
        #expect(try await answer(replayer, request("/users/1")) == "3")
        let error = await refusal { try await replayer.send(request("/users/1")) }
        #expect(error?.detail.contains("its 2 recording(s) were all used") == true)
    }

    @Test func bodiesMatchAsJSONValuesWhenAsked() async throws {
        let file = try await record([
            request("/users", method: .post, json: #"{"name":"Ada","tags":["a","b"],"password":"\#(CassetteFixture.password)"}"#),
            request("/users", method: .post, json: #"{"name":"Grace"}"#),
        ])
        #expect(try CassetteFixture.secretsIn(file) == [])
        let replayer = try ReplayingTransport(file: file, matching: RequestMatching(body: true))
        // Other key order and spacing, and another password: the same body.
        #expect(try await answer(replayer, request("/users", method: .post, json: #"{"name":"Grace"}"#)) == "2")
        #expect(try await answer(replayer, request("/users", method: .post, json: #"{ "password": "x", "tags": ["a", "b"], "name": "Ada" }"#)) == "1")
        let unmatched = try ReplayingTransport(file: file, matching: RequestMatching(body: true))
        let error = await refusal {
            try await unmatched.send(request("/users", method: .post, json: #"{"name":"Ada","tags":["b","a"]}"#))
        }
        #expect(error?.detail.contains("the body differs") == true)
        // Without the option, the first recording answers whatever the body.
        let loose = try ReplayingTransport(file: file)
        #expect(try await answer(loose, request("/users", method: .post, json: #"{"name":"Nobody"}"#)) == "1")
    }

    @Test func headerFieldsMatchWhenNamed() async throws {
        let tenant = HTTPField.Name("X-Tenant")!
        let file = try await record([
            request("/me", fields: [tenant: "a", .authorization: CassetteFixture.token]),
            request("/me", fields: [tenant: "b", .authorization: CassetteFixture.token]),
        ])
        #expect(try CassetteFixture.secretsIn(file) == [])
        let replayer = try ReplayingTransport(file: file, matching: RequestMatching(headers: ["X-Tenant", "Authorization"]))
        #expect(try await answer(replayer, request("/me", fields: [tenant: "b", .authorization: "Bearer other"])) == "2")
        let error = await refusal {
            try await replayer.send(request("/me", fields: [tenant: "c", .authorization: "Bearer other"]))
        }
        #expect(error?.detail.contains("the header field X-Tenant differs") == true)
    }

    @Test func aCustomMatcherHasTheLastWord() async throws {
        let file = try await record([request("/users/1"), request("/users/1?v=2")])
        let replayer = try ReplayingTransport(
            file: file,
            matching: RequestMatching(custom: { _, recorded in recorded.url.hasSuffix("v=2") })
        )
        let error = await refusal { try await replayer.send(request("/users/1")) }
        #expect(error?.detail.contains("the custom matcher refused it") == true)
        let origins = try ReplayingTransport(file: file, matching: RequestMatching(ignoresOrigin: true))
        let elsewhere = TransportRequest(method: .get, url: "https://api.example.com/users/1", deadline: .now + .seconds(5), maxResponseBytes: 100)
        #expect(String(buffer: try await origins.send(elsewhere).body.bytes ?? ByteBuffer()) == "1")
    }
}
