import ArgumentParser
import Foundation
import Resourceful

/// Options of the five verb commands.
struct CallOptions: ParsableArguments {
    @Argument(help: "The resource's path, relative to the base URL, such as users/42; or a whole URL under the base URL (with no base URL anywhere, the URL's origin is the base).")
    var path: String

    @Argument(help: "Parameters as key=value (text) or key:=json (any JSON value, such as n:=3 or tags:='[\"a\"]').")
    var parameters: [String] = []

    @Option(name: [.customShort("d"), .long], help: "Parameters as a JSON object: inline, @file.json to read a file, or @- to read standard input.")
    var data: String?

    @Option(name: .customLong("env"), help: "The configuration to load from the config directory.")
    var environment = "development"

    @Option(help: "Where the configuration files are (default: $RESOURCEFUL_CONFIG_DIR, else ./Configs).")
    var configDirectory: String?

    @Option(name: .customLong("base-url"), help: ArgumentHelp("The base URL paths are resolved against, winning over the configuration's (default: $RESOURCEFUL_BASE_URL). With no configuration file, the call is made with this alone and no stored credential unless --account (the keyring item of this URL's host) or --header names one; a configuration's credentials, base header fields and query items and TLS trust settings are not used when this (or the variable) names another origin than its baseURL, and the working directory's Configs is not read unless chosen with --config-directory.", valueName: "url"))
    var baseURL: String?

    @Option(help: "One of the upstream services the configuration describes under `services`.")
    var service: String?

    @Option(help: "The keyring account whose stored token (see `login`) authorizes the call; without it, the configured storages (authentication.storages) are asked.")
    var account: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A header field to send, 'Name: value' (repeatable); it wins over the configuration's and the stored credential's, has its value masked in logs, recordings and --curl when its name is a secret's (Authorization, Cookie, a name holding token, key, secret or password, or one logging.maskedHeaders names), and is not sent on to another origin.", valueName: "Name: value"))
    var headers: [String] = []

    @Option(name: [.long, .customLong("max-time")], help: ArgumentHelp("The call's deadline, attempts and waits included, winning over the configuration's timeout; with -o or --stream, the whole transfer's too (as curl's --max-time, which names it too).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: [.customShort("s"), .long], help: "Draw no progress bar for -o (errors are still written, as curl's -sS writes them).")
    var silent = false

    @Flag(help: "Ask for a compressed answer and decompress it, whatever the configuration's http.decompression says (as curl's --compressed).")
    var compressed = false

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects: always done, within http.maxRedirects (accepted as curl's -L).")
    var location = false

    @Flag(name: [.customShort("i"), .long], help: "Print the response's status line and header fields (secrets masked as in the log) before its body.")
    var include = false

    @Flag(name: [.customShort("v"), .long], help: "Write the redacted request and response log to standard error (without it, the configuration's logging.level says what is written there; warnings, such as a credential file others can read, by default).")
    var verbose = false

    @Flag(help: "Print the request as a curl command, secrets masked, instead of sending it.")
    var curl = false

    @Option(help: ArgumentHelp("Append the exchange to this HAR file, secrets masked.", valueName: "file.har"))
    var record: String?

    @Option(help: ArgumentHelp("Answer from this HAR file instead of the network.", valueName: "file.har"))
    var replay: String?

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Write the response body to this file, whole or not at all (resumed after a dropped connection); nothing is printed. Only a regular file is replaced (never a device, FIFO or socket); `-` writes the body to standard output instead. A progress bar goes to standard error when it is a terminal.", valueName: "file"))
    var output: String?

    @Option(name: [.customShort("C"), .customLong("continue-at")], help: ArgumentHelp("With --output, `-` (curl's `-C -`): an interrupted download keeps its part beside the file, and the next run with -C - resumes it.", valueName: "-"))
    var continueAt: String?

    @Option(name: .customLong("max-filesize"), help: ArgumentHelp("With --output, the largest body written, in bytes or with a suffix k, M, G or T (powers of 1024); a larger one is refused and nothing is left (curl's --max-filesize).", valueName: "bytes"))
    var maxFileSize: ByteCount?

    @Flag(help: "Print each server-sent event's data, or each line of a streamed body, as it arrives, until the stream ends or you interrupt it.")
    var stream = false

    func validate() throws {
        if record != nil, replay != nil { throw ValidationError("give --record or --replay, not both") }
        if output != nil, stream { throw ValidationError("give --output or --stream, not both") }
        if let continueAt, continueAt != "-" { throw ValidationError("-C/--continue-at takes only '-' (resume where the last run stopped), not '\(continueAt)'") }
        if output == nil, continueAt != nil || maxFileSize != nil { throw ValidationError("-C/--continue-at and --max-filesize go with --output") }
        if curl, output != nil || stream || include { throw ValidationError("--curl sends nothing: it takes neither --output, --stream nor --include") }
        if let baseURL {
            guard let url = URL(string: baseURL) else { throw ValidationError("--base-url must be an absolute http or https URL") }
            if let problem = APIConfig.baseURLProblem(url) { throw ValidationError("--base-url must be \(problem)") }
        }
        if let timeout, let problem = APIConfig.timeoutProblem(seconds: timeout) { throw ValidationError("--timeout must be \(problem)") }
        if try parsedHeaders().contains(where: { $0.name.lowercased() == "proxy-authorization" }) {
            // Through a proxy's tunnel (https), a header field goes to the origin, not the proxy.
            throw ValidationError("--header: 'Proxy-Authorization' would reach the server behind the proxy, not the proxy: name the proxy's credential in a configuration's http.proxyCredentialService")
        }
    }

    /// The fields that frame the message or manage the connection (RFC 9110 §7.6.1, RFC 9112
    /// §6-7), lowercased: the transport sets them, `--header` may not.
    static let framingFields: Set<String> = [
        "content-length", "transfer-encoding", "te", "trailer", "connection", "keep-alive", "upgrade", "proxy-connection",
    ]

    /// The `--header` fields, name and value, in the order given; several of one name are joined
    /// with `, ` as HTTP joins them.
    ///
    /// - Throws: `ValidationError` naming the field (never its value) when one is not
    ///   `Name: value` with a token for a name and no CR, LF or NUL in the value, or is one of
    ///   ``framingFields``.
    func parsedHeaders() throws -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        for line in headers {
            guard let colon = line.firstIndex(of: ":") else {
                throw ValidationError("--header takes 'Name: value'; one given has no ':'")
            }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            guard APIConfig.isValidHeader(name: name, value: value) else {
                // The value may be a secret: only the name is shown, and only when it is a token.
                let shown = APIConfig.isValidHeader(name: name, value: "") ? "'\(name)'" : "a header"
                throw ValidationError("--header: \(shown) is not a valid header field: a name of letters, digits and !#$%&'*+-.^_`|~ and a value without CR, LF or NUL")
            }
            guard !Self.framingFields.contains(name.lowercased()) else {
                // The transport frames the body and manages the connection: a field of its own
                // would contradict the body sent, or ask a server or proxy to read it otherwise.
                throw ValidationError("--header: '\(name)' is set by the transport from the body and the connection; it cannot be given")
            }
            if let index = result.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
                result[index].value += ", " + value
            } else {
                result.append((name, value))
            }
        }
        return result
    }
}
