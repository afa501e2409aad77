import ArgumentParser
import Foundation

/// Options of the five verb commands.
struct CallOptions: ParsableArguments {
    @Argument(help: "The resource's path, relative to the configured base URL, such as users/42.")
    var path: String

    @Argument(help: "Parameters as key=value (text) or key:=json (any JSON value, such as n:=3 or tags:='[\"a\"]').")
    var parameters: [String] = []

    @Option(help: "Parameters as a JSON object: inline, or @file.json to read a file.")
    var data: String?

    @Option(name: .customLong("env"), help: "The configuration to load from the config directory.")
    var environment = "development"

    @Option(help: "Where the configuration files are (default: $RESOURCEFUL_CONFIG_DIR, else ./Configs).")
    var configDirectory: String?

    @Option(help: "One of the upstream services the configuration describes under `services`.")
    var service: String?

    @Option(help: "The keyring account whose stored token (see `login`) authorizes the call; without it, the configured storages (authentication.storages) are asked.")
    var account: String?

    @Flag(help: "Write the redacted request and response log to standard error (without it, only warnings, such as a credential file others can read, are written there).")
    var verbose = false

    @Flag(help: "Print the request as a curl command, secrets masked, instead of sending it.")
    var curl = false

    @Option(help: ArgumentHelp("Append the exchange to this HAR file, secrets masked.", valueName: "file.har"))
    var record: String?

    @Option(help: ArgumentHelp("Answer from this HAR file instead of the network.", valueName: "file.har"))
    var replay: String?

    @Option(help: ArgumentHelp("Write the response body to this file, whole or not at all (resumed after a dropped connection); nothing is printed. Only a regular file is replaced (never a device, FIFO or socket); `-` writes the body to standard output instead. A progress bar goes to standard error when it is a terminal.", valueName: "file"))
    var output: String?

    @Flag(help: "Print each server-sent event's data, or each line of a streamed body, as it arrives, until the stream ends or you interrupt it.")
    var stream = false

    func validate() throws {
        if record != nil, replay != nil { throw ValidationError("give --record or --replay, not both") }
        if output != nil, stream { throw ValidationError("give --output or --stream, not both") }
        if curl, output != nil || stream { throw ValidationError("--curl sends nothing: it takes neither --output nor --stream") }
    }
}
