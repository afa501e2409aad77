import ArgumentParser
import Foundation
import HTTPTypes
import Resourceful

/// Exit codes of the verb commands, for scripts.
enum CallExitCode {
    /// The server answered with a status outside 200–299; its body is on standard error.
    static let httpError = ExitCode(1)
    /// The credential could not be read from a configured storage.
    static let credentials = ExitCode(3)
    /// No usable answer: connection failure, time-out, response too large, cancelled.
    static let transport = ExitCode(4)
    /// The configuration could not be loaded.
    static let configuration = ExitCode(5)
    /// The request could not be built, or the answer could not be read.
    static let invalid = ExitCode(6)
    /// The TLS handshake failed (an untrusted or expired certificate, another host's name).
    static let tls = ExitCode(7)
    /// A redirect was refused (https to http, another scheme, a body to another origin).
    static let redirectRefused = ExitCode(8)
}

/// How a failed call is told: one message on standard error and an exit code.
enum CallReport {
    static func report(_ error: APIError) -> Never {
        switch error.kind {
        case .unacceptableStatus:
            var message = "resourceful: the server answered \(error.status.map { "\($0.code) \($0.reasonPhrase)" } ?? "an error")"
            if let body = error.errorResponse(as: JSONValue.self), let text = try? body.prettyPrinted() { message += "\n" + text }
            fail(message, CallExitCode.httpError)
        case .authentication:
            fail("resourceful: \(error.detail ?? error.underlying.map { "\($0)" } ?? "\(error)")", CallExitCode.credentials)
        case .transport, .timeout, .responseTooLarge, .cancelled:
            fail("resourceful: \(error)\(error.underlying.map { " (\($0))" } ?? "")", CallExitCode.transport)
        case .tls:
            fail("resourceful: \(error)\(error.underlying.map { " (\($0))" } ?? "")", CallExitCode.tls)
        case .redirectRefused:
            fail("resourceful: \(error)", CallExitCode.redirectRefused)
        case .invalidConfiguration:
            // A configuration refused (one not chosen, a storage's settings) is not a request
            // that could not be built.
            fail("resourceful: \(error)", CallExitCode.configuration)
        default:
            fail("resourceful: \(error)", CallExitCode.invalid)
        }
    }

    /// Writes `message` to standard error and exits with `code`.
    static func fail(_ message: String, _ code: ExitCode) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(code.rawValue)
    }
}
