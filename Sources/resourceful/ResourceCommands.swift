import ArgumentParser
import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting

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

/// Makes one call with `verb` and prints the answer.
enum CallRunner {
    static func run(_ verb: ResourceVerb, _ options: CallOptions, updateMethod: UpdateMethod = .put) async throws {
        var config: APIConfig
        do {
            config = try await APIConfig.load(environment: options.environment, configDirectory: options.configDirectory, service: options.service)
        } catch {
            fail("resourceful: \(error)", CallExitCode.configuration)
        }
        let parameters = try parse(options)
        var logger = Logger(label: "resourceful") { _ in
            var handler = StreamLogHandler.standardError(label: "resourceful")
            handler.logLevel = .debug
            return handler
        }
        // Warnings (a credential file others can read, a renewal without the lock other processes
        // share) reach the person without --verbose.
        logger.logLevel = options.verbose ? .debug : .warning
        CommandCredentials.configure(&config, account: options.account)
        let deferred = DeferredTransport()
        let storage: any AuthenticationStorage
        do throws(APIError) {
            storage = try await CommandCredentials.storage(for: config, account: options.account, transport: deferred, logger: logger)
        } catch {
            report(error)
        }
        let transport: any HTTPTransport
        do {
            transport = try await Self.transport(options, config: config, storage: storage)
            deferred.resolve(transport)
        } catch let error as APIError {
            report(error)
        } catch {
            fail("resourceful: \(error)", CallExitCode.configuration)
        }
        let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger))
        let request = ToolRequest(
            verb: verb, path: ResourcePath(encoded: encodePath(options.path)), parameters: parameters, updateMethod: updateMethod
        )
        if options.curl {
            let command: Result<String, APIError>
            do throws(APIError) {
                command = .success(try await api.curl(for: request))
            } catch {
                command = .failure(error)
            }
            try? await api.shutdown()
            switch command {
            case .success(let text): print(text)
            case .failure(let error): report(error)
            }
            return
        }
        if let output = options.output {
            let outcome = await StreamOutput.download(api, request, to: output)
            try? await api.shutdown()
            if case .failure(let error) = outcome { report(error) }
            return
        }
        if options.stream {
            let outcome = await StreamOutput.print(api, request)
            try? await api.shutdown()
            if case .failure(let error) = outcome { report(error) }
            return
        }
        let result: Result<JSONValue, APIError>
        do throws(APIError) {
            result = .success(try await api.call(request))
        } catch {
            result = .failure(error)
        }
        try? await api.shutdown()
        switch result {
        case .success(.null):
            break
        case .success(let value):
            print(try value.prettyPrinted())
        case .failure(let error):
            report(error)
        }
    }

    /// The network, recorded with `--record`; or, with `--replay`, a HAR file and no network.
    private static func transport(_ options: CallOptions, config: APIConfig, storage: any AuthenticationStorage) async throws -> any HTTPTransport {
        if let replay = options.replay {
            return try ReplayingTransport(file: URL(fileURLWithPath: replay), masking: config.redaction)
        }
        let network = try await APIDependencies.transport(for: config, storage: storage, environment: nil)
        guard let record = options.record else { return network }
        return try RecordingTransport(network, file: URL(fileURLWithPath: record), masking: config.redaction)
    }

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

    /// The parameters: `--data`, or the key=value and key:=json arguments.
    static func parse(_ options: CallOptions) throws -> [String: JSONValue] {
        if let data = options.data {
            guard options.parameters.isEmpty else { throw ValidationError("give parameters either as --data or as key=value, not both") }
            let bytes: Data
            if data.hasPrefix("@") {
                let path = String(data.dropFirst())
                guard let contents = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
                bytes = contents
            } else {
                bytes = Data(data.utf8)
            }
            guard case .object(let object) = try? JSONDecoder().decode(JSONValue.self, from: bytes) else {
                throw ValidationError("--data must hold a JSON object")
            }
            return object
        }
        var result: [String: JSONValue] = [:]
        for parameter in options.parameters {
            if let range = parameter.range(of: ":="), !parameter[..<range.lowerBound].contains("=") {
                let key = String(parameter[..<range.lowerBound])
                guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(parameter[range.upperBound...].utf8)) else {
                    throw ValidationError("the value of \(key) is not valid JSON")
                }
                result[key] = value
            } else if let equals = parameter.firstIndex(of: "=") {
                result[String(parameter[..<equals])] = .string(String(parameter[parameter.index(after: equals)...]))
            } else {
                throw ValidationError("parameter '\(parameter)' is not key=value or key:=json")
            }
        }
        return result
    }

    /// The path as typed, with characters a path may not hold percent-encoded (`%` escapes kept).
    static func encodePath(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.insert("%")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}

/// A call described on the command line.
struct ToolRequest: ResourceRequest {
    typealias ResourceType = JSONValue
    typealias ErrorResponse = JSONValue
    let verb: ResourceVerb
    let path: ResourcePath
    let parameters: [String: JSONValue]
    let updateMethod: UpdateMethod
    var responseDecoder: (any ResponseDecoder)? { EmptyTolerantDecoder() }
}

/// Decodes JSON, reading an empty body as `null`.
struct EmptyTolerantDecoder: ResponseDecoder {
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        if data.isEmpty, let null = JSONValue.null as? T { return null }
        return try JSONDecoder().decode(type, from: data)
    }
}

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "GET one resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.show, options) }
}

struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "index", abstract: "GET a list of resources.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.index, options) }
}

struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "POST a new resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.create, options) }
}

struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "PUT (or PATCH with --patch) a resource.")
    @OptionGroup var options: CallOptions
    @Flag(help: "Send PATCH instead of PUT.")
    var patch = false
    func run() async throws { try await CallRunner.run(.update, options, updateMethod: patch ? .patch : .put) }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "DELETE a resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.delete, options) }
}
