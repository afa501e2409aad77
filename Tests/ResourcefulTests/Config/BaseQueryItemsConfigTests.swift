import Foundation
import Resourceful
import Testing

/// `baseQueryItems` read from a configuration file, at the top level and per service.
@Suite struct BaseQueryItemsConfigTests {
    private func directory(_ json: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-query-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: directory.appendingPathComponent("prod.json"))
        return directory.path
    }

    @Test func readAtTheTopLevelAndReplacedByAService() async throws {
        let configs = try directory("""
            {"baseURL": "https://api.example.com/v1", "service": "s", "baseQueryItems": ["api-version=2024-01-01", "empty="],
             "services": {"azure": {"baseURL": "https://az.example.com", "service": "az", "baseQueryItems": ["api-version=2025-05-01"]}}}
            """)
        let top = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:])
        #expect(top.baseQueryItems == ["api-version": "2024-01-01", "empty": ""])
        let azure = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:], service: "azure")
        #expect(azure.baseQueryItems == ["api-version": "2025-05-01"])
    }

    @Test func anEntryWithoutANameIsRefusedByKey() async throws {
        let configs = try directory(#"{"baseURL": "https://api.example.com", "service": "s", "baseQueryItems": ["=x"]}"#)
        let error = await #expect(throws: APIError.self) {
            try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:])
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect("\(String(describing: error))".contains("baseQueryItems"))
        #expect("\(String(describing: error))".contains("name=value"))
    }
}
