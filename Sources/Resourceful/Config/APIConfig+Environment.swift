import Configuration
package import Foundation

extension APIConfig {
    /// Reads a configuration from environment variables alone, with no file: `RESOURCEFUL_BASE_URL`
    /// and `RESOURCEFUL_SERVICE` (both required), and any other key's variable
    /// (`RESOURCEFUL_TIMEOUT`, `RESOURCEFUL_LOGGING_LEVEL`…), checked by the same rules as a file's:
    /// one meant for a key that nothing reads (`RESOURCEFUL_TIMOUT`) is refused, naming the nearest.
    ///
    /// What the command-line tool reads for a call made without a configuration file.
    ///
    /// - Parameter variables: The environment variables to read.
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the variable at fault, never its value.
    package static func load(environmentVariablesOnly variables: [String: String]) throws(APIError) -> APIConfig {
        let provider = EnvironmentVariablesProvider(environmentVariables: variables)
            .prefixKeys(with: ConfigKey(environmentVariablePrefix.lowercased()))
        do {
            // A variable meant for a key no part of the configuration reads is refused, as in a file.
            let otherModules = try ConfigurationKeyCheck.check(variables: variables)
            var config = try ConfigKeyReader(reader: ConfigReader(providers: [provider]), file: nil, variables: variables).apiConfig()
            config.authentication.otherModules = otherModules
            return config
        } catch {
            throw error.apiError
        }
    }

    /// Why `url` cannot be a base URL (what `baseURL` must be), or `nil` when it can.
    package static func baseURLProblem(_ url: URL) -> String? {
        problem(with: url)
    }

    /// Why `seconds` cannot be a call's ``timeout``, or `nil` when it can: the range `timeout`
    /// allows in a file.
    package static func timeoutProblem(seconds: Double) -> String? {
        guard seconds.isFinite, seconds > 0, seconds <= Limits.maxSeconds,
            isAllowed(.milliseconds(Int64((seconds * 1000).rounded())), allowZero: false)
        else { return secondsExpectation(allowZero: false) }
        return nil
    }

    /// Whether a header field's name and value are ones a request may carry: a token for a name,
    /// and a value without CR, LF or NUL (the rules ``baseHeaders`` and a request's headers meet).
    package static func isValidHeader(name: String, value: String) -> Bool {
        HeaderValidation.isValidName(name) && HeaderValidation.isValidValue(value)
    }
}
