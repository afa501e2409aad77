import Foundation
import Resourceful

/// A call described on the command line. Its answer, and the body of an error status, are kept as
/// the bytes the server sent: the tool prints them as they are (JSON pretty printed, text,
/// binary refused on a terminal), whatever their media type.
struct ToolRequest: ResourceRequest {
    typealias ResourceType = RawBody
    typealias ErrorResponse = RawBody
    let verb: ResourceVerb
    let path: ResourcePath
    let parameters: [String: JSONValue]
    let updateMethod: UpdateMethod
    /// `--timeout`: for `-o` and `--stream` too, the time the whole transfer may take, as curl's
    /// `--max-time` (``RequestOptions/streamTimeout``); `nil` keeps the configuration's.
    var wholeTimeout: Duration?

    func configure(_ options: inout RequestOptions) {
        options.responseDecoder = RawBodyDecoder()
        if let wholeTimeout { options.streamTimeout = wholeTimeout }
    }
}

/// A response body as the server sent it (after its `Content-Encoding` is undone).
struct RawBody: Decodable, Sendable {
    /// The body's bytes.
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Never used: ``RawBodyDecoder`` makes the body from its bytes. Reads a JSON string, for a
    /// decoder that is not that one.
    init(from decoder: any Decoder) throws {
        bytes = Array(try decoder.singleValueContainer().decode(String.self).utf8)
    }
}

/// Keeps the body's bytes as they are; any other type is decoded from JSON.
struct RawBodyDecoder: ResponseDecoder {
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if let body = RawBody(Array(data)) as? T { return body }
        return try JSONDecoder().decode(type, from: data)
    }
}
