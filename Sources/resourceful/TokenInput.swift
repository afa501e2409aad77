import Foundation

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// Reads a secret from standard input, or from the terminal without echo.
enum TokenInput {
    static func read(prompt: String) -> String? {
        guard isatty(STDIN_FILENO) != 0 else {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        StandardStreams.error(prompt)
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            StandardStreams.error("\n")
        }
        return readLine(strippingNewline: true)
    }
}
