import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPCompression

/// Decompresses a `gzip` or `deflate` body with swift-nio-extras' decompressor, so that a
/// recording keeps the body as HAR expects it: decoded.
enum BodyDecompression {
    /// The encodings it decodes.
    static func decodes(_ encoding: String) -> Bool {
        ["gzip", "x-gzip", "deflate"].contains(encoding.lowercased())
    }

    /// `body` decompressed, at most `limit` bytes of it.
    static func decompress(_ body: ByteBuffer, encoding: String, limit: Int) throws -> ByteBuffer {
        let channel = EmbeddedChannel(handler: NIOHTTPRequestDecompressor(limit: .size(max(limit, 1))))
        defer { _ = try? channel.finish() }
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/", headers: ["Content-Encoding": encoding])
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        try channel.writeInbound(HTTPServerRequestPart.body(body))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        var output = ByteBuffer()
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
            if case .body(var chunk) = part { output.writeBuffer(&chunk) }
        }
        return output
    }
}
