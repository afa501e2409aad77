import ArgumentParser
import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// Makes one call with `verb` and prints the answer.
enum CallRunner {
    static func run(_ verb: ResourceVerb, _ options: CallOptions, updateMethod: UpdateMethod = .put) async throws {
        let target: CallTarget
        // One reading of the environment: the checks of the credentials and the transport see
        // the same values.
        let variables = TransportEnvironment.process()
        switch await CallTarget.resolve(options, variables: variables) {
        case .success(let resolved): target = resolved
        case .failure(.configuration(let message)): CallReport.fail(message, CallExitCode.configuration)
        case .failure(.invalid(let message)): CallReport.fail(message, CallExitCode.invalid)
        }
        var config = target.config
        let parameters = try await parse(options, timeout: config.timeout)
        var logger = Logger(label: "resourceful") { _ in
            var handler = StreamLogHandler.standardError(label: "resourceful")
            handler.logLevel = .debug
            return handler
        }
        // The configuration's level (`logging.level`; nothing but warnings and errors is written
        // below debug, so a credential file others can read or a renewal without the lock other
        // processes share reaches the person by default); --verbose means debug (or trace, when configured).
        logger.logLevel = options.verbose ? min(config.logging.level, .debug) : config.logging.level
        for warning in target.warnings { logger.warning("\(warning)") }
        if let unused = CallTarget.unusedSharedState(config) { logger.warning("\(unused)") }
        CommandCredentials.configure(&config, account: options.account)
        let deferred = DeferredTransport()
        let storage: any AuthenticationStorage
        do throws(APIError) {
            storage = try await CommandCredentials.storage(for: config, account: options.account, transport: deferred, logger: logger)
        } catch {
            CallReport.report(error, verbose: options.verbose)
        }
        // The file's proxy credential still reaches the file's proxy when the base URL moved to
        // another origin: asked of the file's own storages, for the proxy's service alone.
        var proxyStorage = storage
        if let proxyConfig = target.proxyCredentialConfig {
            do throws(APIError) {
                proxyStorage = try await CommandCredentials.storage(for: proxyConfig, account: options.account, transport: deferred, logger: logger)
            } catch {
                CallReport.report(error, verbose: options.verbose)
            }
        }
        let transport: any HTTPTransport
        do {
            transport = try await Self.transport(options, config: config, storage: proxyStorage, environment: TransportEnvironment.restricted(variables))
            deferred.resolve(transport)
        } catch let error as APIError {
            CallReport.report(error, verbose: options.verbose)
        } catch {
            CallReport.report(setUp: error, verbose: options.verbose)
        }
        let middlewares: [any APIMiddleware] = options.include ? [ResponseHeadPrinter(logging: config.logging)] + API.defaultMiddlewares : API.defaultMiddlewares
        let api = API(
            dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger),
            middlewares: middlewares
        )
        let request = ToolRequest(
            verb: verb, path: ResourcePath(encoded: target.path), parameters: parameters, updateMethod: updateMethod,
            wholeTimeout: options.timeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
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
            case .failure(let error): CallReport.report(error, verbose: options.verbose)
            }
            return
        }
        if let output = options.output {
            let outcome = await StreamOutput.download(
                api, request, to: output, resume: options.continueAt != nil, maxFileSize: options.maxFileSize?.bytes, progress: !options.silent)
            try? await api.shutdown()
            if case .failure(let error) = outcome { CallReport.report(error, verbose: options.verbose) }
            return
        }
        if options.stream {
            let outcome = await StreamOutput.print(api, request)
            try? await api.shutdown()
            if case .failure(let error) = outcome { CallReport.report(error, verbose: options.verbose) }
            return
        }
        let outcome = await CallOutput.call(api, request)
        try? await api.shutdown()
        if case .failure(let error) = outcome { CallReport.report(error, verbose: options.verbose) }
    }

    /// The network, recorded with `--record`; or, with `--replay`, a HAR file and no network.
    /// `storage` is asked for the proxy's credential alone.
    private static func transport(
        _ options: CallOptions, config: APIConfig, storage: any AuthenticationStorage, environment: [String: String]
    ) async throws -> any HTTPTransport {
        let (masking, timeout) = (config.redaction, config.timeout)
        if let replay = options.replay {
            let file = URL(fileURLWithPath: replay, isDirectory: false)
            return try await offPool(replay, "--replay", timeout: timeout) { try ReplayingTransport(file: file, masking: masking) }
        }
        let network = try await APIDependencies.transport(for: config, storage: storage, environment: environment)
        guard let record = options.record else { return network }
        let file = URL(fileURLWithPath: record, isDirectory: false)
        do {
            return try await offPool(record, "--record", timeout: timeout) { () throws -> RecordingTransport in
                // As `-o` (and curl without `--create-dirs`): a folder that is not there is a
                // mistyped path, not one to make.
                let folder = file.deletingLastPathComponent().path
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    throw CassetteError(.unwritableFile, detail: "\(file.path) cannot be written: the folder \(folder) does not exist")
                }
                return try RecordingTransport(network, file: file, masking: masking)
            }
        } catch {
            try? await network.shutdown()
            throw error
        }
    }

    /// Makes a transport that reads or checks `path` (`flag`'s file) on a thread of its own,
    /// waiting at most `timeout`: a file system that does not answer fails the command with the
    /// local-file status instead of holding it.
    private static func offPool<T: HTTPTransport>(
        _ path: String, _ flag: String, timeout: Duration, _ make: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let outcome = await OffPoolWork.run(until: .now + timeout, abandon: { (_: Result<T, any Error>) in }) { Result { try make() } }
        switch outcome {
        case .done(let result): return try result.get()
        case .timedOut, .cancelled:
            CallReport.fail("resourceful: \(flag) \(path): its file system did not answer within \(timeout)", CallExitCode.localFile)
        }
    }

    /// The largest `--data @file` read: parameters, not an upload.
    static let maxDataFileBytes = 64 << 20

    /// The contents of `--data @path`: a regular file (never a FIFO or device, which could hang or
    /// never end) of at most ``maxDataFileBytes``, read within `timeout` (a file system that does
    /// not answer holds a thread of its own, not the command); anything else exits with the
    /// local-file status.
    static func readDataFile(_ path: String, timeout: Duration) async -> Data {
        do {
            return Data(try await readRegularFile(path, maximumBytes: maxDataFileBytes, until: .now + timeout))
        } catch {
            CallReport.fail("resourceful: --data @\(path) was not read: \(error.reason)", CallExitCode.localFile)
        }
    }

    /// The parameters: `--data`, or the key=value and key:=json arguments.
    static func parse(_ options: CallOptions, timeout: Duration) async throws -> [String: JSONValue] {
        if let data = options.data {
            guard options.parameters.isEmpty else { throw ValidationError("give parameters either as --data or as key=value, not both") }
            let bytes: Data
            if data == "@-" {
                bytes = await StandardInput.read(maximumBytes: maxDataFileBytes)
            } else if data.hasPrefix("@") {
                let path = String(data.dropFirst())
                bytes = await readDataFile(path, timeout: timeout)
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
}
