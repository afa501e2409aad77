import Foundation
import Resourceful

/// A call described on the command line.
struct ToolRequest: ResourceRequest {
    typealias ResourceType = JSONValue
    typealias ErrorResponse = JSONValue
    let verb: ResourceVerb
    let path: ResourcePath
    let parameters: [String: JSONValue]
    let updateMethod: UpdateMethod
    var responseDecoder: (any ResponseDecoder)? { EmptyTolerantDecoder() }
}

/// Decodes JSON, reading an empty body as `null`.
struct EmptyTolerantDecoder: ResponseDecoder {
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if data.isEmpty, let null = JSONValue.null as? T { return null }
        return try JSONDecoder().decode(type, from: data)
    }
}
