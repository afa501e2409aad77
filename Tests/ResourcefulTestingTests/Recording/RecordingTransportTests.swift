import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// A recording transport is still a transport: it passes the checks every transport must pass,
/// and keeps every exchange of concurrent calls.
@Suite struct RecordingTransportTests {
    @Test func passesTheTransportConformanceChecks() async throws {
        try await AsyncHTTPClientTransport.withTransport { live in
            let recorder = try RecordingTransport(live, file: try CassetteFixture.scratchFile())
            try await HTTPTransportConformance(transport: recorder).run()
        }
    }

    @Test func keepsEveryExchangeOfConcurrentCalls() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.route(.get, "/users/:id") { request in
                .json(raw: #"{"id":\#(request.pathParameters["id"] ?? "0"),"name":"n"}"#)
            }
            try await AsyncHTTPClientTransport.withTransport { live in
                let api = CassetteFixture.api(server.baseURL, try RecordingTransport(live, file: file))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for id in 1...32 {
                        group.addTask { _ = try await api.call(AdHocRequest<CassetteFixture.User, Empty>(.show, "users/\(id)")) }
                    }
                    try await group.waitForAll()
                }
            }
            let replayer = try ReplayingTransport(file: file)
            let replayAPI = CassetteFixture.api(server.baseURL, replayer)
            for id in (1...32).reversed() {
                #expect(try await replayAPI.call(AdHocRequest<CassetteFixture.User, Empty>(.show, "users/\(id)")).id == id)
            }
        }
    }
}

/// A long recording: each exchange writes its own entry, and the file stays a HAR file that
/// reads back whole after every one.
@Suite struct LongRecordingTests {
    @Test func twoThousandEntriesStayOneValidArchive() async throws {
        let file = try CassetteFixture.scratchFile()
        let network = StubTransport { request in
            TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: ByteBuffer(string: #"{"url":"\#(request.url)"}"#))
        }
        let recorder = try RecordingTransport(network, file: file)
        for index in 0..<2_000 {
            _ = try await recorder.send(
                TransportRequest(method: .get, url: "https://api.example.com/v1/items/\(index)", deadline: .now + .seconds(30), maxResponseBytes: 1 << 20)
            )
            if index == 0 || index == 999 {
                // Valid JSON between exchanges, not only at the end.
                let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
                let entries = (object?["log"] as? [String: Any])?["entries"] as? [Any]
                #expect(entries?.count == index + 1)
            }
        }
        let replayer = try ReplayingTransport(file: file)
        let answer = try await replayer.send(
            TransportRequest(method: .get, url: "https://api.example.com/v1/items/1999", deadline: .now + .seconds(30), maxResponseBytes: 1 << 20)
        )
        #expect(String(buffer: answer.body.bytes ?? ByteBuffer()).contains("items/1999"))
        // Appending to it adds after what it holds.
        let again = try RecordingTransport(network, file: file)
        _ = try await again.send(
            TransportRequest(method: .get, url: "https://api.example.com/v1/items/last", deadline: .now + .seconds(30), maxResponseBytes: 1 << 20)
        )
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect(((object?["log"] as? [String: Any])?["entries"] as? [Any])?.count == 2_001)
    }
}
