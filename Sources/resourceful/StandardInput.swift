import Foundation
import Resourceful

#if canImport(Glibc)
import Glibc
#endif

/// `--data @-`: the parameters read from standard input, as curl reads them.
enum StandardInput {
    /// Standard input to its end, at most `maximumBytes`, read on a thread of its own (a pipe or
    /// terminal that is slow to end holds that thread, never the command's tasks); a larger input,
    /// or one that cannot be read, exits with the local-file status.
    static func read(maximumBytes: Int) async -> Data {
        // As long as the input takes: a person typing, a producer still writing.
        let outcome = await OffPoolWork.run(until: .now + .seconds(365 * 86_400), abandon: { (_: Result<Data, ReadFailure>) in }) {
            readToEnd(maximumBytes: maximumBytes)
        }
        switch outcome {
        case .done(.success(let data)): return data
        case .done(.failure(let failure)): CallReport.fail("resourceful: --data @- was not read: \(failure.reason)", CallExitCode.localFile)
        case .timedOut, .cancelled: CallReport.fail("resourceful: --data @- was not read: interrupted", CallExitCode.localFile)
        }
    }

    /// Why standard input was not read.
    struct ReadFailure: Error {
        var reason: String
    }

    private static func readToEnd(maximumBytes: Int) -> Result<Data, ReadFailure> {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count == 0 { return .success(data) }
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadFailure(reason: String(cString: strerror(errno))))
            }
            guard data.count + count <= maximumBytes else { return .failure(ReadFailure(reason: "larger than \(maximumBytes) bytes")) }
            data.append(contentsOf: buffer[0..<count])
        }
    }
}
