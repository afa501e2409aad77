import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bad configuration values, from a file, an environment variable or code: each is a typed error
/// naming its key (and the variable it came from), never a trap.
@Suite struct HostileConfigTests {
    private func load(_ json: String, environment: [String: String] = [:]) async throws(APIError) -> APIConfig {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-hostile-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? Data(json.utf8).write(to: directory.appendingPathComponent("hostile.json"))
        return try await APIConfig.load(environment: "hostile", configDirectory: directory.path, environmentVariables: environment)
    }

    static let fileCases: [(key: String, json: String)] = [
        ("maxResponseBytes", #""maxResponseBytes": 5000000000"#),
        ("maxResponseBytes", #""maxResponseBytes": -1"#),
        ("maxResponseBytes", #""maxResponseBytes": 0"#),
        ("timeout", #""timeout": 1e300"#),
        ("timeout", #""timeout": -3"#),
        ("timeout", #""timeout": 0"#),
        ("retry.maxDelay", #""retry": {"maxDelay": 1e17}"#),
        ("retry.baseDelay", #""retry": {"baseDelay": -1}"#),
        ("retry.maxAttempts", #""retry": {"maxAttempts": 1000000}"#),
        ("retry.maxAttempts", #""retry": {"maxAttempts": 0}"#),
        ("retry.retryableStatuses", #""retry": {"retryableStatuses": ["700"]}"#),
        ("http.connectTimeout", #""http": {"connectTimeout": 1e40}"#),
        ("http.maximumConnectionsPerHost", #""http": {"maximumConnectionsPerHost": 0}"#),
        ("http.maximumConnectionsPerHost", #""http": {"maximumConnectionsPerHost": 9000000000000}"#),
        ("http.maxRedirects", #""http": {"maxRedirects": -1}"#),
        ("http.maxDecompressionRatio", #""http": {"maxDecompressionRatio": 0}"#),
        ("logging.maxBodyBytes", #""logging": {"maxBodyBytes": 999999999999}"#),
        ("authentication.file.refreshInterval", #""authentication": {"file": {"refreshInterval": 1e300}}"#),
        ("coding.arrayFormat", #""coding": {"arrayFormat": "semicolon"}"#),
    ]

    @Test(arguments: fileCases)
    func aBadValueInTheFileNamesItsKey(key: String, json: String) async throws {
        let error = await expectConfigError {
            _ = try await load(#"{"baseURL": "https://api.example.com/v1", "service": "s", \#(json)}"#)
        }
        #expect(error?.key == key)
        #expect(error?.source.hasSuffix("hostile.json") == true)
        #expect(error?.description.contains(key) == true)
    }

    static let variableCases: [(variable: String, value: String, key: String)] = [
        ("RESOURCEFUL_RETRY_MAX_DELAY", "1e17", "retry.maxDelay"),
        ("RESOURCEFUL_TIMEOUT", "1e300", "timeout"),
        ("RESOURCEFUL_TIMEOUT", "nan", "timeout"),
        ("RESOURCEFUL_MAX_RESPONSE_BYTES", "5000000000", "maxResponseBytes"),
        ("RESOURCEFUL_HTTP_MAX_REDIRECTS", "-4", "http.maxRedirects"),
        ("RESOURCEFUL_BASE_URL", "https://api.example.com/v1?key=1", "baseURL"),
    ]

    @Test(arguments: variableCases)
    func aBadValueFromAVariableNamesTheVariable(variable: String, value: String, key: String) async throws {
        let error = await expectConfigError {
            _ = try await load(#"{"baseURL": "https://api.example.com/v1", "service": "s"}"#, environment: [variable: value])
        }
        #expect(error?.key == key)
        #expect(error?.source == variable)
        #expect(error?.description.contains(variable) == true)
    }

    @Test(arguments: [
        "https://api.example.com/v1?key=1",
        "https://api.example.com/v1#users",
        "https://ada:pw@api.example.com/v1",
        "https://api.example.com/v1?",
        "ftp://api.example.com/v1",
    ])
    func aBaseURLWithQueryFragmentOrUserIsRefused(url: String) async throws {
        let error = await expectConfigError { _ = try await load(#"{"baseURL": "\#(url)", "service": "s"}"#) }
        #expect(error?.key == "baseURL")
        #expect(error?.description.contains("pw") == false)
    }

    static let codeCases: [(key: String, change: @Sendable (inout APIConfig) -> Void)] = [
        ("maxResponseBytes", { $0.maxResponseBytes = 5_000_000_000 }),
        ("maxResponseBytes", { $0.maxResponseBytes = -1 }),
        ("timeout", { $0.timeout = .seconds(Int64.max) }),
        ("timeout", { $0.timeout = .zero }),
        ("retry.maxDelay", { $0.retry.maxDelay = .seconds(-1) }),
        ("retry.maxAttempts", { $0.retry.maxAttempts = 0 }),
        ("http.maximumConnectionsPerHost", { $0.http.maximumConnectionsPerHost = -5 }),
        ("baseURL", { $0.baseURL = URL(string: "http://127.0.0.1:1/v1?k=1")! }),
        ("baseURL", { $0.baseURL = URL(string: "http://127.0.0.1:1/v1#frag")! }),
        ("baseURL", { $0.baseURL = URL(string: "http://ada:SECRET-PW@127.0.0.1:1/v1")! }),
        ("service", { $0.service = "" }),
    ]

    @Test(arguments: codeCases)
    func aBadConfigurationBuiltInCodeFailsTheFirstCallWithoutSending(key: String, change: @Sendable (inout APIConfig) -> Void) async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/x", .status(.noContent))
            var config = harness.dependencies.apiConfig
            change(&config)
            if key != "baseURL" { config.baseURL = harness.dependencies.apiConfig.baseURL }
            harness.dependencies.apiConfig = config
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .invalidConfiguration)
            #expect((error?.underlying as? APIConfigError)?.key == key)
            #expect(!(error?.description.contains("SECRET-PW") ?? true))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test(arguments: ["fifo", "/dev/zero", "directory", "huge"])
    func aConfigurationPathThatIsNotASmallFileIsRefusedAtOnce(kind: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("hostile.json").path
        switch kind {
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "huge": try Data(repeating: 0x20, count: 2 << 20).write(to: URL(fileURLWithPath: path))
        default: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: kind)
        }
        let error = await expectConfigError {
            _ = try await APIConfig.load(environment: "hostile", configDirectory: directory.path, environmentVariables: [:])
        }
        #expect(error?.kind == .invalidFile)
    }

    @Test func aTransportGivenOutOfRangeSettingsDoesNotTrap() async throws {
        let settings = APIConfig.HTTPSettings(
            maximumConnectionsPerHost: -1, idleTimeout: .seconds(-1), connectTimeout: .seconds(Int64.max), maxDecompressionRatio: -3
        )
        try await MockServer.withTransport(settings: settings) { server, transport in
            server.stub(.get, "/x", .status(.noContent))
            let tooLarge = TransportRequest(method: .get, url: server.baseURL.absoluteString + "/x", deadline: .now + .seconds(60), maxResponseBytes: Int.max)
            let error = await #expect(throws: TransportError.self) { _ = try await transport.send(tooLarge) }
            #expect(error.map { APIError.classifying($0, deadline: .now + .seconds(60)).kind } == .invalidRequest)
            #expect(error?.description == "TransportError.invalidRequest: maxResponseBytes is outside 0 to 4 GiB − 1")
            let fine = TransportRequest(method: .get, url: server.baseURL.absoluteString + "/x", deadline: .now + .seconds(60), maxResponseBytes: 100)
            let answer = try await transport.send(fine)
            #expect(answer.status == .noContent)
        }
    }
}
