import Foundation

// resourceful-bench-streaming: one streaming operation per process, so that the process's peak
// resident set size is that operation's. `scripts/bench-streaming.py` runs it against nginx and
// compares it with curl; each mode prints its result as one line of JSON.
//
//   resourceful-bench-streaming idle URL             makes the API and does nothing else
//   resourceful-bench-streaming download URL FILE    api.download of URL to FILE
//   resourceful-bench-streaming upload URL FILE      PUT of FILE as the body (FileUpload) to URL
//   resourceful-bench-streaming events URL COUNT ROUNDS
//                                                    the event stream at URL (COUNT events), read by
//                                                    api.events and by raw AsyncHTTPClient, paired

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch (arguments.first, arguments.count) {
    case ("idle", 2):
        let api = streamingAPI(arguments[1])
        print(#"{"idle":true}"#)
        withExtendedLifetime(api) {}
    case ("download", 3):
        try await timedDownload(arguments[1], to: arguments[2])
    case ("upload", 3):
        try await timedUpload(arguments[2], to: arguments[1])
    case ("events", 4):
        guard let count = Int(arguments[2]), let rounds = Int(arguments[3]) else { throw Usage() }
        try await compareEventStreams(arguments[1], count: count, rounds: rounds)
    default:
        throw Usage()
    }
} catch {
    FileHandle.standardError.write(Data("resourceful-bench-streaming: \(error)\n".utf8))
    exit(1)
}

struct Usage: Error, CustomStringConvertible {
    var description: String {
        "usage: resourceful-bench-streaming idle URL | download URL FILE | upload URL FILE | events URL COUNT ROUNDS"
    }
}
