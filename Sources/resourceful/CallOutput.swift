import Foundation
import HTTPTypes
import Resourceful

#if canImport(Glibc)
import Glibc
#endif

/// What a successful call prints on standard output.
enum CallOutput {
    /// Makes the call and prints its answer (see ``print(_:contentType:)``).
    static func call(_ api: API, _ request: ToolRequest) async -> Result<Void, APIError> {
        let response: APIResponse<RawBody>
        do throws(APIError) {
            response = try await api.response(request)
        } catch {
            return .failure(error)
        }
        return print(response.value.bytes, contentType: response.headerFields[.contentType])
    }

    /// Prints a body: nothing when it is empty; JSON (a JSON media type, or none) pretty printed,
    /// in colour on a terminal; anything else as it is. On a terminal, text has its control
    /// characters escaped and a binary body is refused (it could drive the terminal), as httpie
    /// and curl do; written to a pipe or a file, the bytes are those the server sent.
    static func print(_ bytes: [UInt8], contentType: String?) -> Result<Void, APIError> {
        guard !bytes.isEmpty else { return .success(()) }
        let toTerminal = isatty(STDOUT_FILENO) == 1
        if contentType.map(MediaType.isJSON) ?? true {
            let colours = TerminalText.coloursOnStandardOutput
            var failure: APIError?
            let formatted = JSONFormatter.format(bytes, colours: colours) { piece in
                do throws(APIError) {
                    try StandardStreams.output(piece)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { return .failure(failure) }
            if formatted { return write(Array("\n".utf8)) }
        }
        guard toTerminal else { return write(bytes) }
        guard let text = TerminalText.text(bytes) else {
            let type = contentType.flatMap(shownMediaType).map { " of \($0)" } ?? ""
            return .failure(APIError(
                kind: .file,
                detail: "binary output can mess up your terminal: the answer is \(bytes.count) bytes\(type); use --output FILE, or redirect standard output"
            ))
        }
        let shown = TerminalText.escaped(text)
        return write(Array((shown.hasSuffix("\n") ? shown : shown + "\n").utf8))
    }

    /// A server's `Content-Type` fit to be named in a message: its media type when it is a plain
    /// `type/subtype` of at most 64 characters, else `nil` (it is the server's text).
    static func shownMediaType(_ contentType: String) -> String? {
        let essence = MediaType.essence(of: contentType).lowercased()
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789!#$&-^_.+/")
        guard essence.count <= 64, essence.filter({ $0 == "/" }).count == 1, essence.allSatisfy(allowed.contains) else { return nil }
        return essence
    }

    /// Writes `bytes` to standard output; a failure (a full disk, the reader gone) is a
    /// ``APIError/Kind/file`` error, never a crash.
    private static func write(_ bytes: [UInt8]) -> Result<Void, APIError> {
        do throws(APIError) {
            try StandardStreams.output(bytes)
            return .success(())
        } catch {
            return .failure(error)
        }
    }
}
