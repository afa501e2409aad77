import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Text a server sent, made safe to show to a person: no character that could drive a terminal.
enum TerminalText {
    /// Whether `scalar` could move the cursor, change colours, retitle the window or reorder what
    /// is shown: C0 and C1 controls (tab and line feed aside), DEL, and format characters such
    /// as bidirectional overrides.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\n" || scalar == "\t" { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned: return true
        default: return false
        }
    }

    /// `text` with every unsafe character written as an escape (`\x1b`, `\u{202e}`), and CR LF
    /// line ends as LF.
    static func escaped(_ text: String) -> String {
        escapedPrefix(text, maxBytes: .max).text
    }

    /// The first characters of `text` escaped as ``escaped(_:)`` escapes them, up to the first
    /// that makes the result `maxBytes` bytes of UTF-8 or more, and how many bytes of `text`
    /// they come from: the cost is that of the prefix, whatever the size of `text`.
    static func escapedPrefix(_ text: String, maxBytes: Int) -> (text: String, read: Int) {
        var result = ""
        result.reserveCapacity(min(text.utf8.count, maxBytes))
        var read = 0
        var scalars = text.unicodeScalars[...]
        while result.utf8.count < maxBytes, let scalar = scalars.popFirst() {
            read += scalar.utf8.count
            if scalar == "\r", scalars.first == "\n" { continue }
            guard isUnsafe(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            result += scalar.value <= 0xFF ? "\\x" + (hex.count == 1 ? "0" : "") + hex : "\\u{\(hex)}"
        }
        return (result, read)
    }

    /// `bytes` as text when they are UTF-8 without a NUL byte, else `nil` (a binary body).
    static func text(_ bytes: [UInt8]) -> String? {
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Whether colours may be written to standard output: it is a terminal, `NO_COLOR` is unset
    /// or empty (no-color.org), and `TERM` is not `dumb`.
    static var coloursOnStandardOutput: Bool {
        let environment = ProcessInfo.processInfo.environment
        guard isatty(STDOUT_FILENO) == 1 else { return false }
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }
}
