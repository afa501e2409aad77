import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// One configuration file describing two upstream services (`services.<name>`), each a MockServer.
@Suite struct ServicesConfigTests {
    /// A config directory whose `prod` file has `users` at the top level and `billing` under
    /// `services`, with `extra` added to the file's top level.
    private func directory(users: MockServer, billing: MockServer, extra: String = "") throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-services-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let json = """
            {"baseURL": "\(users.baseURL.absoluteString)/v1", "service": "users-api", "timeout": 7,
             "baseHeaders": ["X-Team: core"], \(extra)
             "services": {
               "billing": {"baseURL": "\(billing.baseURL.absoluteString)/v2", "service": "billing-api",
                           "baseHeaders": ["X-Team: money"], "retry": {"maxAttempts": 1}},
               "search": {"baseURL": "\(billing.baseURL.absoluteString)/search", "service": "search-api",
                          "http": {"maximumConnectionsPerHost": 2}}
             }}
            """
        try Data(json.utf8).write(to: directory.appendingPathComponent("prod.json"))
        return directory.path
    }

    private static let storage = InMemoryAuthenticationStorage(["users-api": "Bearer u", "billing-api": "Bearer b", "search-api": "Bearer s"])

    @Test func aServiceOverridesTheTopLevelKeyByKey() async throws {
        try await MockServer.withRunning { users in
            try await MockServer.withRunning { billing in
                let configs = try directory(users: users, billing: billing)
                let top = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:])
                let service = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:], service: "billing")
                #expect(top.service == "users-api" && service.service == "billing-api")
                #expect(service.baseURL.absoluteString == billing.baseURL.absoluteString + "/v2")
                #expect(service.baseHeaders == ["X-Team": "money"])
                #expect(service.retry.maxAttempts == 1 && top.retry.maxAttempts != 1)
                // Not overridden: the top level's.
                #expect(service.timeout == .seconds(7))
                // The service's own variables win over its keys, the top level's lose to them.
                let variables = ["RESOURCEFUL_SERVICES_BILLING_RETRY_MAX_ATTEMPTS": "3", "RESOURCEFUL_RETRY_MAX_ATTEMPTS": "8", "RESOURCEFUL_TIMEOUT": "9"]
                let overridden = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: variables, service: "billing")
                #expect(overridden.retry.maxAttempts == 3)
                #expect(overridden.timeout == .seconds(9))
                // Except `service`, which picks whose stored credentials go to the file's server:
                // a variable naming another one is refused, naming itself.
                for (variable, picked) in [("RESOURCEFUL_SERVICES_BILLING_SERVICE", "billing"), ("RESOURCEFUL_SERVICE", nil)] {
                    let error = await #expect(throws: APIError.self) {
                        _ = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [variable: "users-api-2"], service: picked)
                    }
                    let underlying = error?.underlying as? APIConfigError
                    #expect(underlying?.kind == .movedByVariable && underlying?.source == variable, "\(String(describing: error))")
                }
                // The top level's variable does not reach a service that names its own.
                _ = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: ["RESOURCEFUL_SERVICE": "nope"], service: "billing")
            }
        }
    }

    @Test func anUnknownServiceOrABadServiceValueIsNamedInFull() async throws {
        try await MockServer.withRunning { users in
            try await MockServer.withRunning { billing in
                let configs = try directory(users: users, billing: billing)
                let unknown = await #expect(throws: APIError.self) {
                    _ = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: [:], service: "payroll")
                }
                #expect(unknown?.kind == .invalidConfiguration)
                #expect(unknown?.description.contains("services.payroll") == true)
                #expect(unknown?.description.contains("billing, search") == true)
                let variables = ["RESOURCEFUL_SERVICES_BILLING_TIMEOUT": "soon"]
                let bad = await #expect(throws: APIError.self) {
                    _ = try await APIConfig.load(environment: "prod", configDirectory: configs, environmentVariables: variables, service: "billing")
                }
                #expect(bad?.description.contains("services.billing.timeout") == true)
                #expect(bad?.description.contains("RESOURCEFUL_SERVICES_BILLING_TIMEOUT") == true)
                #expect(bad?.description.contains("soon") == false)
            }
        }
    }

    @Test func servicesOfOneFileShareOneClientUntilTheLastIsShutDown() async throws {
        try await MockServer.withRunning { users in
            try await MockServer.withRunning { billing in
                users.stub(.get, "/v1/me", .status(.noContent))
                billing.stub(.get, "/v2/invoices", .status(.noContent))
                let configs = try directory(users: users, billing: billing)
                let usersDeps = try await APIDependencies.live(environment: "prod", configDirectory: configs, environmentVariables: [:], authenticationStorage: Self.storage)
                let billingDeps = try await APIDependencies.live(
                    environment: "prod", configDirectory: configs, environmentVariables: [:], authenticationStorage: Self.storage, service: "billing"
                )
                let searchDeps = try await APIDependencies.live(
                    environment: "prod", configDirectory: configs, environmentVariables: [:], authenticationStorage: Self.storage, service: "search"
                )
                let usersClient = try #require(usersDeps.transport as? SharedTransports.Lease)
                let billingClient = try #require(billingDeps.transport as? SharedTransports.Lease)
                let searchClient = try #require(searchDeps.transport as? SharedTransports.Lease)
                #expect(usersClient.transport === billingClient.transport)
                // Other HTTP settings, another client.
                #expect(searchClient.transport !== usersClient.transport)

                let usersAPI = API(dependencies: usersDeps), billingAPI = API(dependencies: billingDeps)
                _ = try await usersAPI.call(AdHocRequest<Empty, Empty>(.show, "me"))
                _ = try await billingAPI.call(AdHocRequest<Empty, Empty>(.show, "invoices"))
                #expect(users.requests.first?.headerFields[.authorization] == "Bearer u")
                #expect(billing.requests.first?.headerFields[.authorization] == "Bearer b")
                #expect(billing.requests.first?.headerFields[HTTPField.Name("X-Team")!] == "money")

                // One API shut down: the other still calls through the shared client.
                try await usersAPI.shutdown()
                let afterwards = await #expect(throws: APIError.self) { _ = try await usersAPI.call(AdHocRequest<Empty, Empty>(.show, "me")) }
                #expect(afterwards?.kind == .transport)
                _ = try await billingAPI.call(AdHocRequest<Empty, Empty>(.show, "invoices"))
                #expect(billing.requests.count == 2)
                // The last share closes it; a new load gets a new client.
                try await billingAPI.shutdown()
                let again = try await APIDependencies.live(environment: "prod", configDirectory: configs, environmentVariables: [:], authenticationStorage: Self.storage)
                #expect((again.transport as? SharedTransports.Lease)?.transport !== usersClient.transport)
                try await again.transport.shutdown()
                try await searchDeps.transport.shutdown()
            }
        }
    }
}
