public import Foundation

/// A file sent as one part of a ``BodyEncoding/multipart`` body.
///
/// Put it among a request's parameters:
///
/// ```swift
/// struct Upload: Encodable, Sendable { var title: String; var file: MultipartFile }
/// ```
public struct MultipartFile: Encodable, Sendable, Hashable {
    /// The file name sent in the part's `Content-Disposition`.
    public var filename: String
    /// The part's `Content-Type`.
    public var contentType: String
    /// The file's bytes.
    public var data: Data

    /// Creates a file part.
    public init(filename: String, contentType: String = "application/octet-stream", data: Data) {
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }

    /// Outside a multipart body, a file encodes as its name, type and base64 bytes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(filename, forKey: .filename)
        try container.encode(contentType, forKey: .contentType)
        try container.encode(data.base64EncodedString(), forKey: .data)
    }

    private enum CodingKeys: String, CodingKey {
        case filename, contentType, data
    }
}
