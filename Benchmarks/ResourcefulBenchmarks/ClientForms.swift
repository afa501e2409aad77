import AsyncHTTPClient
import Benchmark
import Foundation
import NIOCore
import NIOPosix

/// AsyncHTTPClient's two ways to run a request, raw and paired: the async `execute`, whose
/// deadline ends when the head arrives, and the delegate-based `execute(request:delegate:)`, whose
/// deadline holds until the whole body is in; and the async form with a deadline over the body.
func registerClientFormBenchmarks(_ fixtures: Fixtures) {
    let url = fixtures.base + "/users/1"
    for concurrency in [1, 32] {
        Paired(names: ["async execute", "delegate execute", "async execute, body deadline"]) { form in
            try await batch(concurrency) {
                let bytes: ByteBuffer
                switch form {
                case 0:
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "Accept", value: "application/json")
                    let response = try await fixtures.rawClient.execute(request, deadline: .now() + .seconds(30))
                    bytes = try await response.body.collect(upTo: 10 * 1024 * 1024)
                case 1:
                    let request = try HTTPClient.Request(url: url, method: .GET, headers: ["Accept": "application/json"])
                    let delegate = ResponseAccumulator(request: request, maxBodySize: 10 * 1024 * 1024)
                    let task = fixtures.rawClient.execute(request: request, delegate: delegate, deadline: .now() + .seconds(30))
                    let response = try await withTaskCancellationHandler {
                        try await task.futureResult.get()
                    } onCancel: {
                        task.cancel()
                    }
                    bytes = response.body ?? ByteBuffer()
                default:
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "Accept", value: "application/json")
                    let deadline = NIODeadline.now() + .seconds(30)
                    let response = try await fixtures.rawClient.execute(request, deadline: deadline)
                    bytes = try await collect(response, before: deadline)
                }
                blackHole(try fixtures.decoder.decode(User.self, from: Data(buffer: bytes, byteTransferStrategy: .noCopy)))
            }
        }.register("show C=\(concurrency) client forms paired", repeats: 4, maxDuration: .seconds(6))
    }
}
