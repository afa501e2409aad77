import Foundation
import Resourceful
import ResourcefulTesting
import Testing

/// A kind of shared state an app brings: named by the configuration, its keys read and checked by
/// its own factory, its state used by the API made from the dependencies.
@Suite struct SharedStateFactoryTests {
    /// `sharedState.custom.address`, which a variable may not move.
    struct CustomFactory: SharedStateFactory {
        let made = Locked<[String]>([])
        var kind: String { "custom" }

        func makeSharedState(_ context: SharedStateContext) async throws(APIError) -> SharedState {
            try context.keys.refuseVariable(for: "address", because: "it moves where the fleet's state is kept")
            guard let address = try context.keys.nonEmptyString("address") else {
                throw context.keys.invalid("address", expected: "the store's address")
            }
            made.withLock { $0.append(address) }
            return SharedState()
        }
    }

    /// A configuration file in a folder of its own, naming the custom kind.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shared-factory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let json = #"{"baseURL": "https://api.example", "service": "s", "sharedState": {"kind": "custom", "custom": {"address": "store-1"}}}"#
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return folder
    }

    @Test func anAppsOwnKindIsMadeFromItsKeys() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let factory = CustomFactory()
        let dependencies = try await APIDependencies.live(
            environment: "x", configDirectory: folder.path, environmentVariables: [:], sharedStateFactories: [factory])
        #expect(dependencies.sharedState != nil)
        #expect(factory.made.withLock { $0 } == ["store-1"])
        try await API(dependencies: dependencies).shutdown()
    }

    @Test func aVariableMovingItsStoreIsRefused() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let factory = CustomFactory()
        let error = await #expect(throws: APIError.self) {
            _ = try await APIDependencies.live(
                environment: "x", configDirectory: folder.path,
                environmentVariables: ["RESOURCEFUL_SHARED_STATE_CUSTOM_ADDRESS": "store-of-another"], sharedStateFactories: [factory])
        }
        #expect(error?.kind == .invalidConfiguration)
        #expect((error?.underlying as? APIConfigError)?.key == "sharedState.custom.address")
        #expect(factory.made.withLock { $0 }.isEmpty)
        #expect(!String(describing: error).contains("store-of-another"))
    }
}
