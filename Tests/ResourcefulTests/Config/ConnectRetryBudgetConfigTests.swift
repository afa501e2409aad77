import Foundation
import Resourceful
import Testing

/// `http.connectRetryBudget`: how long a request keeps trying to connect while it is refused,
/// read from the file or a variable, 2 seconds unless set, and checked like the other times.
@Suite struct ConnectRetryBudgetConfigTests {
    private func load(_ http: String, variables: [String: String] = [:]) async throws -> APIConfig {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-connect-budget-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = #"{"baseURL": "https://a.example", "service": "s", "http": {\#(http)}}"#
        try Data(json.utf8).write(to: directory.appendingPathComponent("staging.json"))
        return try await APIConfig.load(environment: "staging", configDirectory: directory.path, environmentVariables: variables)
    }

    @Test func twoSecondsUnlessSet() async throws {
        #expect(try await load("").http.connectRetryBudget == .seconds(2))
        #expect(APIConfig.HTTPSettings().connectRetryBudget == .seconds(2))
    }

    @Test func readFromTheFileAndAVariable() async throws {
        #expect(try await load(#""connectRetryBudget": 0.5"#).http.connectRetryBudget == .milliseconds(500))
        #expect(try await load(#""connectRetryBudget": 0"#).http.connectRetryBudget == .zero)
        let overridden = try await load(#""connectRetryBudget": 0.5"#, variables: ["RESOURCEFUL_HTTP_CONNECT_RETRY_BUDGET": "5"])
        #expect(overridden.http.connectRetryBudget == .seconds(5))
    }

    @Test func aNegativeOrUnreadableBudgetIsRefusedNamingTheKey() async throws {
        for value in ["-1", #""soon""#] {
            let error = await #expect(throws: APIError.self) { _ = try await load(#""connectRetryBudget": \#(value)"#) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("http.connectRetryBudget") == true, "\(String(describing: error))")
        }
    }
}
