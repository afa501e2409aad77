public import Foundation

/// A credential as a storage hands it out: the whole value of the header it is sent in, and when
/// it stops being valid, if the storage knows.
///
/// Its description never shows ``header``.
public struct Credential: Sendable, Hashable, CustomStringConvertible {
    /// The whole header value, such as `Bearer abc…`.
    public var header: String
    /// When the credential stops being valid; `nil` when the storage does not know.
    public var expiresAt: Date?

    /// Creates a credential.
    public init(header: String, expiresAt: Date? = nil) {
        self.header = header
        self.expiresAt = expiresAt
    }

    /// Whether the credential is no longer valid at `date`, or will not be within `margin` of it.
    public func hasExpired(at date: Date = Date(), margin: Duration = .zero) -> Bool {
        guard let expiresAt else { return false }
        let seconds = Double(margin.components.seconds) + Double(margin.components.attoseconds) / 1e18
        return expiresAt.timeIntervalSince(date) <= seconds
    }

    /// `credential` and, when it has one, its expiry; never the header.
    public var description: String {
        expiresAt.map { "credential valid until \($0.formatted(.iso8601))" } ?? "credential"
    }
}

extension AuthenticationStorage {
    /// The credential for `service` with no expiry: ``authenticationHeader(for:)``'s answer.
    public func credential(for service: String) async throws -> Credential? {
        try await authenticationHeader(for: service).map { Credential(header: $0) }
    }
}
