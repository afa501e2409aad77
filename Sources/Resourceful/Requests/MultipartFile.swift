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
    /// The file's bytes, when they are in memory; empty for a part read from ``fileURL``.
    public var data: Data
    /// The file on disk the part's bytes are read from as the body is sent, never whole; `nil`
    /// when they are ``data``.
    public var fileURL: URL?

    /// Creates a file part of bytes in memory.
    public init(filename: String, contentType: String = "application/octet-stream", data: Data) {
        self.filename = filename
        self.contentType = contentType
        self.data = data
    }

    /// Creates a file part read from the file at `url` as the body is sent, in bounded memory
    /// whatever its size: the body then streams, with its `Content-Length`. The file is opened
    /// once, when the call builds its body, and checked on that descriptor to be a regular file
    /// (a FIFO or a device fails the call before anything is sent); a retry sends that same file
    /// again, never another one put at its path since. `filename` defaults to the file's name.
    public init(contentsOf url: URL, filename: String? = nil, contentType: String = "application/octet-stream") {
        self.filename = filename ?? url.lastPathComponent
        self.contentType = contentType
        self.data = Data()
        self.fileURL = url
    }

    /// Outside a multipart body, a file encodes as its name, type and base64 bytes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(filename, forKey: .filename)
        try container.encode(contentType, forKey: .contentType)
        if fileURL != nil {
            // Its bytes go only into a multipart body: elsewhere its path would be sent instead.
            throw EncodingError.invalidValue(
                self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "a file read from disk goes only into a multipart body")
            )
        } else {
            try container.encode(data.base64EncodedString(), forKey: .data)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case filename, contentType, data
    }
}

/// A request body read from a file as it is sent, in bounded memory whatever its size: make it
/// the `parameters` of a ``ResourceVerb/create`` or ``ResourceVerb/update`` request.
///
/// ```swift
/// struct UploadBackup: ResourceRequest {
///     typealias ResourceType = Receipt
///     let verb = ResourceVerb.update
///     var path: ResourcePath { "backups/\(name)" }
///     let name: String
///     var parameters: FileUpload { FileUpload(URL(filePath: "/var/backups/db.tar.zst"), contentType: "application/zstd") }
/// }
/// ```
///
/// The body goes out with the file's size as its `Content-Length` and the given `Content-Type`;
/// the file is opened once, when the call builds the body, and a retry, a refreshed credential
/// or a `307` sends that same file again (never another one put at its path since). A file that
/// cannot be read or is not a regular file (checked with `fstat` on the descriptor read from)
/// fails the call with ``APIError/Kind/file`` before anything is sent.
public struct FileUpload: Encodable, Sendable, Hashable {
    /// The file to send.
    public var fileURL: URL
    /// The body's `Content-Type` (a request's own ``ResourceRequest/headers`` win).
    public var contentType: String

    /// An upload of the file at `fileURL`.
    public init(_ fileURL: URL, contentType: String = "application/octet-stream") {
        self.fileURL = fileURL
        self.contentType = contentType
    }

    /// An upload is the whole body, never a value within one: encoding it (as JSON, a form or
    /// a query) throws rather than send its path.
    public func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            self, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "a FileUpload is a request's whole parameters, the body")
        )
    }
}
