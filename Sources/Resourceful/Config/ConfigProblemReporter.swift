import Configuration
import Synchronization

/// Collects the keys whose value was present but could not be read as the asked type, which
/// swift-configuration's optional getters otherwise turn into a silent `nil`.
final class ConfigProblemReporter: AccessReporter {
    struct Problem: Sendable {
        var fromEnvironment: Bool
        var expectedType: String
    }

    private let problems = Mutex<[String: Problem]>([:])

    func report(_ event: AccessEvent) {
        let failedProvider = event.providerResults.first { result in
            if case .failure = result.result { return true }
            return false
        }
        guard failedProvider != nil || event.conversionError != nil else { return }
        let key = event.metadata.key.components.joined(separator: ".")
        let fromEnvironment = failedProvider?.providerName.contains("Environment") ?? false
        let problem = Problem(fromEnvironment: fromEnvironment, expectedType: "\(event.metadata.valueType)")
        problems.withLock { $0[Self.unprefixed(key), default: problem] = problem }
    }

    /// Removes and returns the problem seen for `key`, if any.
    func takeProblem(for key: String) -> Problem? {
        problems.withLock { $0.removeValue(forKey: key) }
    }

    private static func unprefixed(_ key: String) -> String {
        let prefix = APIConfig.environmentVariablePrefix.lowercased() + "."
        return key.hasPrefix(prefix) ? String(key.dropFirst(prefix.count)) : key
    }
}
