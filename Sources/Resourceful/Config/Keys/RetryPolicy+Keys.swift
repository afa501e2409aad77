import Foundation

extension APIConfig.RetryPolicy {
    /// The policy under `keys` (`retry`): `maxAttempts`, `baseDelay`, `maxDelay` and
    /// `retryableStatuses`, checked; the defaults for those not set.
    ///
    /// - Throws: ``APIError/Kind/invalidConfiguration`` naming the key at fault.
    public init(keys: ConfigurationKeys) throws(APIError) {
        self.init()
        maxAttempts = try keys.int("maxAttempts", in: APIConfig.Limits.maxAttempts, unit: "attempts") ?? maxAttempts
        baseDelay = try keys.seconds("baseDelay", allowZero: true) ?? baseDelay
        maxDelay = try keys.seconds("maxDelay", allowZero: true) ?? maxDelay
        if let statuses = try keys.stringArray("retryableStatuses") {
            let codes = statuses.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter(APIConfig.Limits.statuses.contains)
            guard codes.count == statuses.count else { throw keys.invalid("retryableStatuses", expected: "HTTP status codes") }
            retryableStatuses = Set(codes)
        }
    }
}
