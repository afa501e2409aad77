import AsyncHTTPClient
import Foundation
import NIOCore
import Resourceful
import ResourcefulJSON

/// Reads the event stream at `url` (`count` events numbered from 1) `rounds` times with each
/// reader, in a shuffled order each round, after one round of warm-up, and prints each reader's
/// events per second, round by round (pairs: the same index is the same round).
func compareEventStreams(_ url: String, count: Int, rounds: Int) async throws {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let (jsonAPI, fastAPI) = (streamingAPI(url), streamingAPI(url, decoder: FastJSONDecoder()))
    let readers: [(name: String, read: () async throws -> EventTally)] = [
        ("raw AsyncHTTPClient + JSONDecoder", { try await rawEvents(url, client: client) }),
        ("api.events JSONDecoder", { try await apiEvents(url, api: jsonAPI) }),
        ("api.events FastJSONDecoder", { try await apiEvents(url, api: fastAPI) }),
    ]
    let expected = EventTally(events: count, sum: count * (count + 1) / 2, lastID: String(count))
    var rates = [[Double]](repeating: [], count: readers.count)
    for round in 0...rounds {
        for index in readers.indices.shuffled() {
            let start = ContinuousClock.now
            let tally = try await readers[index].read()
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            guard tally == expected else { throw Mismatch(reader: readers[index].name, tally: tally, expected: expected) }
            if round > 0 { rates[index].append(Double(count) / seconds) }
        }
    }
    try await client.shutdown()
    let result: [String: [String: [Double]]] = ["eventsPerSecond": Dictionary(uniqueKeysWithValues: zip(readers.map(\.name), rates))]
    print(String(decoding: try JSONEncoder().encode(result), as: UTF8.self))
}

/// What a reader saw: the events, the sum of their `n`, the last event ID.
struct EventTally: Equatable {
    var events = 0
    var sum = 0
    var lastID = ""

    mutating func add(type: String, id: String, _ tick: Tick) {
        events += 1
        sum += tick.n
        lastID = id
        precondition(type == "tick" && !tick.text.isEmpty)
    }
}

struct Mismatch: Error {
    var reader: String
    var tally: EventTally
    var expected: EventTally
}

/// `api.events`, no reconnection.
func apiEvents(_ url: String, api: API) async throws -> EventTally {
    var tally = EventTally()
    for try await event in api.events(Ticks(path: lastComponent(url)), reconnect: .never) {
        tally.add(type: event.type, id: event.id, event.data)
    }
    return tally
}

/// Raw AsyncHTTPClient: `execute`, the body's chunks split into lines by hand (LF ends, `field: value`
/// fields), each event's data decoded with `JSONDecoder` at the blank line that ends it.
func rawEvents(_ url: String, client: HTTPClient) async throws -> EventTally {
    var request = HTTPClientRequest(url: url)
    request.headers.add(name: "Accept", value: "text/event-stream")
    let response = try await client.execute(request, timeout: .seconds(60))
    let decoder = JSONDecoder()
    var tally = EventTally()
    var line: [UInt8] = []
    var (type, id, data) = ("message", "", [UInt8]?.none)
    for try await chunk in response.body {
        var rest = chunk.readableBytesView
        while let end = rest.firstIndex(of: UInt8(ascii: "\n")) {
            line.append(contentsOf: rest[..<end])
            rest = rest[rest.index(after: end)...]
            if line.isEmpty {
                if let data { tally.add(type: type, id: id, try decoder.decode(Tick.self, from: Data(data))) }
                (type, data) = ("message", nil)
            } else if line.starts(with: "data: ".utf8) {
                data = data.map { $0 + [UInt8(ascii: "\n")] + line.dropFirst(6) } ?? Array(line.dropFirst(6))
            } else if line.starts(with: "event: ".utf8) {
                type = String(decoding: line.dropFirst(7), as: UTF8.self)
            } else if line.starts(with: "id: ".utf8) {
                id = String(decoding: line.dropFirst(4), as: UTF8.self)
            }
            line.removeAll(keepingCapacity: true)
        }
        line.append(contentsOf: rest)
    }
    return tally
}
