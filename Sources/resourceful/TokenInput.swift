import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a secret from standard input, or from the terminal without echo.
enum TokenInput {
    static func read(prompt: String) -> String? {
        guard isatty(STDIN_FILENO) != 0 else {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSANOW, &original)
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return readLine(strippingNewline: true)
    }
}
