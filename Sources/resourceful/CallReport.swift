import ArgumentParser
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting

/// Exit codes of every command, for scripts: one table, documented in the README.
///
/// | code | meaning |
/// | --- | --- |
/// | 0 | done |
/// | 1 | the answer is no: the server answered outside 200–299 (the verbs), no credential is stored (`status`, `credentials`), the files are out of date (`generate --check`) |
/// | 2 | `generate`: the OpenAPI document or `--config` cannot be read, or a file cannot be written |
/// | 3 | a credential storage, the keyring or the authorization server failed |
/// | 4 | no usable answer: connection failure, time-out, response too large, interrupted |
/// | 5 | the configuration cannot be loaded or does not describe the service |
/// | 6 | the request cannot be built, or the answer cannot be read |
/// | 7 | the TLS handshake failed |
/// | 8 | a redirect was refused, or too many were asked for (a loop) |
/// | 9 | a local file cannot be read or written (`--output`, `--record`, `--replay`), or a binary body was not printed on a terminal |
/// | 64 | the command line is wrong |
enum CallExitCode {
    /// The table above, for `resourceful --help`.
    static let summary = """
        Exit status, for every command:
          0   done
          1   the answer is no: a status outside 200-299 (its body on stderr),
              no credential stored (status, credentials), out of date (generate)
          2   generate: the OpenAPI document or --config cannot be read, or a
              file cannot be written
          3   a credential storage, the keyring or the OAuth 2 server failed
          4   no usable answer: connection, time-out, too large, interrupted,
              the upstream's rate limit or open circuit, a fleet's budget
              that cannot be kept
          5   the configuration cannot be loaded or does not describe the service
          6   the request cannot be built, or the answer cannot be read
          7   the TLS handshake failed
          8   a redirect was refused, or too many were asked for (a loop)
          9   a local file cannot be read or written (--output, --record,
              --replay), or a binary body was not printed on a terminal
          64  the command line is wrong
        """

    /// The server answered with a status outside 200–299; its body is on standard error.
    static let httpError = ExitCode(1)
    /// The credential could not be read from a configured storage.
    static let credentials = ExitCode(3)
    /// No usable answer: connection failure, time-out, response too large, cancelled, the
    /// upstream's rate limit.
    static let transport = ExitCode(4)
    /// The configuration could not be loaded, or does not describe the service.
    static let configuration = ExitCode(5)
    /// The request could not be built, or the answer could not be read.
    static let invalid = ExitCode(6)
    /// The TLS handshake failed (an untrusted or expired certificate, another host's name).
    static let tls = ExitCode(7)
    /// A redirect was refused (https to http, another scheme, a body to another origin).
    static let redirectRefused = ExitCode(8)
    /// A local file could not be read or written (`--output`, `--record`, `--replay`), or a
    /// binary body was not printed on a terminal.
    static let localFile = ExitCode(9)
}

/// How a failed call is told: one plain line on standard error that says what to fix (the
/// error's kind and the error underneath only with `--verbose`), the body of an error status
/// after it, and an exit code.
enum CallReport {
    /// The most of an error status's body shown, in bytes of text.
    static let maxBodyBytes = 8 * 1024

    /// Reports `error` and exits with its code.
    static func report(_ error: APIError, verbose: Bool = false) -> Never {
        fail(message(for: error, verbose: verbose), exitCode(for: error))
    }

    /// Reports an error met before the call (a configuration, a HAR file) and exits with its code.
    static func report(setUp error: any Error, verbose: Bool = false) -> Never {
        switch error {
        case let error as APIError: report(error, verbose: verbose)
        case is CassetteError: fail(describe(error, verbose: verbose), CallExitCode.localFile)
        default: fail(describe(error, verbose: verbose), CallExitCode.configuration)
        }
    }

    /// The line that tells `error`, `resourceful: ` first, without the names of types unless
    /// `verbose`: for messages built before a call (a configuration that cannot be loaded).
    static func describe(_ error: any Error, verbose: Bool = false) -> String {
        switch error {
        case let error as APIError: message(for: error, verbose: verbose)
        case let error as CassetteError: "resourceful: \(plain(error.description))"
        default: "resourceful: \(plain(String(describing: error)))"
        }
    }

    /// The exit code of a call that failed with `error`.
    static func exitCode(for error: APIError) -> ExitCode {
        switch error.kind {
        case .unacceptableStatus, .unauthorized: CallExitCode.httpError
        case .authentication: CallExitCode.credentials
        case .transport where error.underlying is CassetteError:
            (error.underlying as? CassetteError)?.kind == .noRecording ? CallExitCode.transport : CallExitCode.localFile
        case .transport, .timeout, .responseTooLarge, .cancelled, .rateLimited, .circuitOpen, .sharedStateUnavailable: CallExitCode.transport
        case .tls: CallExitCode.tls
        case .redirectRefused, .tooManyRedirects: CallExitCode.redirectRefused
        // A configuration refused (one not chosen, a storage's settings) is not a request
        // that could not be built.
        case .invalidConfiguration: CallExitCode.configuration
        case .file: CallExitCode.localFile
        default: CallExitCode.invalid
        }
    }

    /// What is written for `error`: one line, then an error status's body.
    static func message(for error: APIError, verbose: Bool) -> String {
        var line = "resourceful: "
        if verbose {
            line += "\(error)"
            if let underlying = error.underlying {
                // The type underneath, and its description when it says more than the detail.
                let text = String(describing: underlying)
                line += " (\(String(reflecting: type(of: underlying)))" + (error.detail?.contains(text) == true ? ")" : ": \(text))")
            }
            line = plain(line)
        } else if let method = error.method, let path = error.path {
            line += plain("\(method.rawValue) /\(path): \(what(error))")
        } else {
            line += plain(what(error))
        }
        if let body = error.errorResponse(as: RawBody.self), let shown = errorBody(body.bytes) {
            line += "\n" + shown
        }
        return line
    }

    /// What went wrong, in words, without the names of types.
    private static func what(_ error: APIError) -> String {
        if error.kind == .unacceptableStatus || error.kind == .unauthorized {
            let status = error.status.map { "\($0.code) \($0.reasonPhrase)" } ?? "an error"
            let hint = error.kind == .unauthorized ? " (see `resourceful credentials` for where the credential comes from)" : ""
            return "the server answered \(status)\(hint)"
        }
        let underlying = error.underlying.flatMap(shownUnderlying)
        var text: String
        switch (error.detail, underlying) {
        case (let detail?, let underlying?) where !detail.contains(underlying) && !underlying.contains(detail):
            text = "\(detail) (\(underlying))"
        case (let detail?, let underlying?):
            text = detail.count >= underlying.count ? detail : underlying
        case (let detail?, nil):
            text = detail
        case (nil, let underlying?):
            text = underlying
        case (nil, nil):
            text = phrase(error.kind)
        }
        if error.kind == .decodingFailed, let codingPath = error.codingPath, !codingPath.isEmpty { text = "at '\(codingPath)': \(text)" }
        // A detail that says where, not what: the kind said in words first.
        if error.kind == .timeout, error.detail != nil || underlying != nil { text = "timed out: \(text) (the call's limit: --timeout, or timeout in the configuration)" }
        if error.kind == .cancelled, error.detail != nil || underlying != nil { text = "interrupted: \(text)" }
        return text
    }

    /// The description of an error underneath that is written to be shown: no type names, no
    /// secret.
    private static func shownUnderlying(_ error: any Error) -> String? {
        switch error {
        case let error as CassetteError: error.description
        case let error as any SecretFreeDescription: error.description
        case let error as APIError: error.detail
        case let error as TransportError: error.detail
        default: nil
        }
    }

    /// What a kind of failure means, for an error without a detail.
    private static func phrase(_ kind: APIError.Kind) -> String {
        switch kind {
        case .transport: "the connection failed before a whole answer arrived"
        case .timeout: "no answer within the time limit (--timeout, or timeout in the configuration)"
        case .cancelled: "the call was interrupted"
        case .responseTooLarge: "the answer is larger than the configuration's maxResponseBytes allows: write it to a file with -o FILE (bounded by --max-filesize alone), or raise maxResponseBytes"
        case .tls: "the TLS handshake failed: the server's certificate is not trusted, has expired or names another host (--verbose tells which)"
        case .tooManyRedirects: "too many redirects (http.maxRedirects in the configuration)"
        case .redirectRefused: "a redirect was refused"
        case .unsupportedContentEncoding: "the answer is compressed in a way that cannot be read"
        case .decodingFailed: "the answer could not be read"
        case .encodingFailed: "the parameters could not be encoded"
        case .invalidRequest: "the request cannot be built"
        case .invalidConfiguration: "the configuration cannot be used"
        case .authentication: "the credential could not be read"
        case .file: "a local file could not be read or written"
        default: "the call failed"
        }
    }

    /// An error status's body as it is shown on standard error: JSON pretty printed, text with
    /// its control characters escaped, either cut at ``maxBodyBytes`` with the count of the
    /// body's bytes not shown; a binary body only named by its size. Only what is shown is
    /// formatted: a large or deeply nested body costs no more than its first bytes.
    static func errorBody(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty else { return nil }
        var shown: [UInt8]
        var unread: Int
        if let json = JSONFormatter.prefix(bytes, maxBytes: maxBodyBytes + 1) {
            (shown, unread) = json
        } else {
            guard let text = TerminalText.text(bytes) else { return "(a binary body of \(bytes.count) bytes, not shown)" }
            let prefix = TerminalText.escapedPrefix(text, maxBytes: maxBodyBytes + 1)
            (shown, unread) = (Array(prefix.text.utf8), bytes.count - prefix.read)
        }
        if shown.count <= maxBodyBytes, unread == 0 {
            let text = String(decoding: shown, as: UTF8.self)
            return text.hasSuffix("\n") ? String(text.dropLast()) : text
        }
        // Cut at a character's start.
        var end = min(shown.count, maxBodyBytes)
        if end < shown.count {
            while end > 0, shown[end] & 0xC0 == 0x80 { end -= 1 }
        }
        let rest = unread > 0 ? "\(unread) more bytes not shown" : "the rest not shown"
        return String(decoding: shown[..<end], as: UTF8.self) + "\n… (\(rest))"
    }

    /// `text` on one line, with no character that could drive a terminal.
    static func plain(_ text: String) -> String {
        TerminalText.escaped(text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " "))
    }

    /// Writes `message` to standard error and exits with `code`.
    static func fail(_ message: String, _ code: ExitCode) -> Never {
        // A failure to write (a full disk, the reader gone) is ignored: the exit code still tells.
        StandardStreams.error(message + "\n")
        exit(code.rawValue)
    }
}
