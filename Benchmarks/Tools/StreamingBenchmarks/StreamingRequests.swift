import Foundation
import Logging
import Resourceful

/// An API for the server of `url` as an application makes one: the default configuration and
/// middlewares, `JSONDecoder` (or `decoder`), logging at `info` into nowhere.
func streamingAPI(_ url: String, decoder: any ResponseDecoder = JSONDecoder()) -> API {
    guard let base = URL(string: url)?.deletingLastPathComponent() else { preconditionFailure("bad URL \(url)") }
    let config = APIConfig(baseURL: base, service: "bench")
    return API(
        dependencies: APIDependencies(
            apiConfig: config,
            authenticationStorage: InMemoryAuthenticationStorage(["bench": "Bearer bench-token"]),
            transport: AsyncHTTPClientTransport(settings: config.http),
            responseDecoder: decoder,
            logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        )
    )
}

/// The last component of `url`, the path of the requests below (relative to ``streamingAPI(_:decoder:)``'s base).
func lastComponent(_ url: String) -> ResourcePath {
    ResourcePath(encoded: URL(string: url)?.lastPathComponent ?? "")
}

/// GET of a file, for `api.download`.
struct GetFile: ResourceRequest {
    typealias ResourceType = Empty
    let verb = ResourceVerb.show
    let path: ResourcePath
}

/// PUT of a file as the request body, read as it is sent.
struct PutFile: ResourceRequest {
    typealias ResourceType = Empty
    let verb = ResourceVerb.update
    let path: ResourcePath
    let parameters: FileUpload
    /// The whole exchange, a gibibyte included.
    let timeout: Duration? = .seconds(600)
}

/// The data of one event of the stream: `{"n":N,"text":"tick N"}`.
struct Tick: Decodable, Sendable {
    var n: Int
    var text: String
}

/// The event stream, each event's data a ``Tick``.
struct Ticks: ResourceRequest {
    typealias ResourceType = Tick
    let verb = ResourceVerb.show
    let path: ResourcePath
}
