public import Foundation

/// A request as a cassette recorded it, as a custom matcher sees it (``RequestMatching``). Values
/// masked when it was written read as `***`.
public struct CassetteRequest: Sendable {
    /// The method, such as `GET`.
    public var method: String
    /// The absolute URL, query included.
    public var url: String
    /// The header fields, in the order recorded.
    public var headerFields: [(name: String, value: String)]
    /// The body; empty when there was none.
    public var body: Data
    /// The body's media type, when it was recorded.
    public var contentType: String?

    init(method: String, url: String, headerFields: [(name: String, value: String)] = [], body: Data = Data(), contentType: String? = nil) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.body = body
        self.contentType = contentType
    }

    /// The first value of the header field `name`, compared without case.
    public func value(of name: String) -> String? {
        headerFields.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
