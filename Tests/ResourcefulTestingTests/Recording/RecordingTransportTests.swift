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
        let live = AsyncHTTPClientTransport()
        let recorder = try RecordingHTTPClient(live, file: try CassetteFixture.scratchFile())
        try await HTTPClientConformance(transport: recorder).run()
        try await recorder.shutdown()
    }

    @Test func keepsEveryExchangeOfConcurrentCalls() async throws {
        let file = try CassetteFixture.scratchFile()
        try await MockServer.withRunning { server in
            server.route(.get, "/users/:id") { request in
                .json(raw: #"{"id":\#(request.pathParameters["id"] ?? "0"),"name":"n"}"#)
            }
            let live = AsyncHTTPClientTransport()
            let api = CassetteFixture.api(server.baseURL, try RecordingHTTPClient(live, file: file))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 1...32 {
                    group.addTask { _ = try await api.call(AdHocRequest<CassetteFixture.User, Empty>(.show, "users/\(id)")) }
                }
                try await group.waitForAll()
            }
            try await live.shutdown()
            let replayer = try ReplayingHTTPClient(file: file)
            let replayAPI = CassetteFixture.api(server.baseURL, replayer)
            for id in (1...32).reversed() {
                #expect(try await replayAPI.call(AdHocRequest<CassetteFixture.User, Empty>(.show, "users/\(id)")).id == id)
            }
        }
    }
}
