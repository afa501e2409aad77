import Foundation
import Resourceful

/// An HTTP Archive (HAR 1.2) as this module reads and writes it: the fields a replay needs, with
/// everything a browser or mitmproxy may leave out optional. Unknown fields (`_custom` ones,
/// `comment`s, `pages`) are ignored when read.
struct HARArchive: Codable, Sendable {
    var log: Log

    struct Log: Codable, Sendable {
        var version: String? = "1.2"
        var creator: Creator? = Creator()
        var entries: [Entry] = []
    }

    struct Creator: Codable, Sendable {
        var name: String = "Resourceful"
        var version: String = UserAgent.version
    }

    struct Entry: Codable, Sendable {
        var startedDateTime: String?
        var time: Double?
        var request: Request?
        var response: Response?
        var cache: Cache? = Cache()
        var timings: Timings? = Timings()
    }

    struct NameValue: Codable, Sendable {
        var name: String
        var value: String
    }

    struct Request: Codable, Sendable {
        var method: String
        var url: String
        var httpVersion: String? = "HTTP/1.1"
        var cookies: [NameValue]? = []
        var headers: [NameValue]? = []
        var queryString: [NameValue]? = []
        var postData: PostData?
        var headersSize: Int? = -1
        var bodySize: Int? = -1
    }

    struct PostData: Codable, Sendable {
        var mimeType: String?
        var text: String?
        var params: [Param]?
        /// Not in HAR 1.2, but written by this module and by several tools for a body that is not
        /// text.
        var encoding: String?
        /// HAR 1.2's free text: why a body was left out.
        var comment: String?
    }

    struct Param: Codable, Sendable {
        var name: String
        var value: String?
        var fileName: String?
        var contentType: String?
    }

    struct Response: Codable, Sendable {
        var status: Int
        var statusText: String? = ""
        var httpVersion: String? = "HTTP/1.1"
        var cookies: [NameValue]? = []
        var headers: [NameValue]? = []
        var content: Content? = Content()
        var redirectURL: String? = ""
        var headersSize: Int? = -1
        var bodySize: Int? = -1
    }

    struct Content: Codable, Sendable {
        var size: Int? = 0
        var mimeType: String? = ""
        var text: String?
        var encoding: String?
        /// HAR 1.2's free text: why a body was left out.
        var comment: String?
    }

    struct Cache: Codable, Sendable {}

    struct Timings: Codable, Sendable {
        var send: Double? = 0
        var wait: Double? = 0
        var receive: Double? = 0
    }
}

extension HARArchive {
    /// The largest HAR file read: a recording of thousands of exchanges is a few hundred MB.
    static let maximumFileBytes = 1 << 30

    /// Reads the archive in `file`.
    static func read(_ file: URL) throws(CassetteError) -> HARArchive {
        let data: Data
        do {
            // A regular file checked on the descriptor it is read from: a FIFO would wait for
            // ever, a device never end.
            data = Data(try readRegularFile(file.path, maximumBytes: maximumFileBytes))
        } catch {
            throw CassetteError(.unreadableFile, detail: "\(file.path) could not be read: \(error.reason)")
        }
        do {
            return try JSONDecoder().decode(HARArchive.self, from: data)
        } catch {
            throw CassetteError(.unreadableFile, detail: "\(file.path) is not a HAR file: \(notHAR(error))")
        }
    }

    /// Why a file is not a HAR file, in words (no decoder's type names), naming the member at
    /// fault by the HAR format's own keys.
    private static func notHAR(_ error: any Error) -> String {
        func path(_ keys: [any CodingKey]) -> String { keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description }
        switch error as? DecodingError {
        case .dataCorrupted(let context) where context.codingPath.isEmpty: return "it is not JSON"
        case .keyNotFound(let key, let context): return "'\(path(context.codingPath + [key]))' is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "'\(path(context.codingPath))' does not hold what HAR puts there"
        default: return "it cannot be read as HAR"
        }
    }

    /// Writes the archive to `file` in one step, so that a reader never sees half of it.
    func write(to file: URL) throws(CassetteError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Only a regular file (or nothing) is replaced, never keeping set-ID bits.
            try OutputFile.write(try encoder.encode(self), to: file.path)
        } catch let error as OutputFileError {
            throw CassetteError(.unwritableFile, detail: error.description)
        } catch {
            throw CassetteError(.unwritableFile, detail: "\(file.path) could not be written: \(error.localizedDescription)")
        }
    }
}
