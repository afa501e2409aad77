public import Resourceful

/// Checks that an ``AuthenticationStorage`` behaves as ``API`` expects; run it in your own tests
/// against your own storage.
///
/// ```swift
/// @Test func myStorageConforms() async throws {
///     let storage = MyStorage()
///     try await AuthenticationStorageConformance(storage: storage) { header, service in
///         try await storage.save(header, for: service)   // nil removes
///     }.run()
/// }
/// ```
///
/// Every check uses service names of its own, so suites can run in parallel against one store.
/// A failure names the check, never a credential.
public struct AuthenticationStorageConformance<Storage: AuthenticationStorage>: Sendable {
    /// Puts `header` in the storage for `service`, or removes what is there when `header` is `nil`.
    /// A caching storage must make the change visible to its next read.
    typealias Writer = @Sendable (_ header: String?, _ service: String) async throws -> Void

    /// A check that did not hold.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The check's name.
        package var check: String
        /// What was wrong, without any credential.
        package var detail: String
        /// `check: detail`.
        public var description: String { "\(check): \(detail)" }
    }

    /// Headers of several schemes and characters, written and read back by the suite.
    @usableFromInline package static var defaultSampleHeaders: [String] {
        ["Bearer conformance-token", "Basic Y29uZm9ybWFuY2U6dGVzdA==", "Token a.b-c_d~e+f/g=", "Bearer ünïcödé-🔑"]
    }

    /// How a storage answers for a service it holds nothing for.
    public enum Absence: Sendable {
        /// It returns `nil` (in memory, the keyring, environment variables).
        case noHeader
        /// It throws, with a description that names no credential (a missing file).
        case error
    }

    private let storage: Storage
    private let write: Writer
    private let sampleHeaders: [String]
    private let absence: Absence

    /// Creates the suite for `storage`, changed through `write`.
    ///
    /// - Parameters:
    ///   - sampleHeaders: The headers written and read back; a storage that always uses one scheme
    ///     passes headers of that scheme only.
    ///   - absence: How the storage answers for a service it holds nothing for.
    public init(storage: Storage, sampleHeaders: [String] = defaultSampleHeaders, absence: Absence = .noHeader, write: @escaping @Sendable (_ header: String?, _ service: String) async throws -> Void) {
        self.storage = storage
        self.write = write
        self.sampleHeaders = sampleHeaders
        self.absence = absence
    }

    /// Runs every check; throws ``Failure`` at the first that does not hold.
    public func run() async throws {
        try await unknownServiceHasNoHeader()
        try await storedHeaderIsReturnedExactly()
        try await servicesAreIndependent()
        try await concurrentReadsAgree()
        try await removedHeaderIsGone()
    }

    private func service(_ check: String) -> String {
        "conformance-\(check)-\(UInt64.random(in: .min ... .max))"
    }

    private func expect(_ condition: Bool, _ check: String, _ detail: String) throws {
        if !condition { throw Failure(check: check, detail: detail) }
    }

    /// Checks that `name` has no credential, the way ``absence`` says.
    private func expectAbsent(_ name: String, _ check: String, _ detail: String) async throws {
        switch absence {
        case .noHeader:
            let header = try await storage.authenticationHeader(for: name)
            try expect(header == nil, check, detail)
        case .error:
            do {
                _ = try await storage.authenticationHeader(for: name)
                try expect(false, check, detail)
            } catch let failure as Failure {
                throw failure
            } catch {
                let text = String(describing: error)
                let leaks = (sampleHeaders + ["first-service", "second-service", "soon-gone", "concurrent-reads"]).contains { text.contains($0) }
                try expect(!leaks, check, "the error for a missing credential holds a credential")
            }
        }
    }

    private func unknownServiceHasNoHeader() async throws {
        try await expectAbsent(service("unknown"), "unknownServiceHasNoHeader", "a header was returned for a service never written")
    }

    private func storedHeaderIsReturnedExactly() async throws {
        for (index, header) in sampleHeaders.enumerated() {
            let name = service("exact-\(index)")
            try await write(header, name)
            let read = try await storage.authenticationHeader(for: name)
            try expect(read == header, "storedHeaderIsReturnedExactly", "header #\(index) did not come back unchanged")
            try await write(nil, name)
        }
    }

    private func servicesAreIndependent() async throws {
        let first = service("first")
        let second = service("second")
        try await write("Bearer first-service", first)
        try await expectAbsent(second, "servicesAreIndependent", "a header written for one service was returned for another")
        try await write("Bearer second-service", second)
        let read = try await storage.authenticationHeader(for: first)
        try expect(read == "Bearer first-service", "servicesAreIndependent", "writing one service changed another")
        try await write(nil, first)
        try await write(nil, second)
    }

    private func concurrentReadsAgree() async throws {
        let name = service("concurrent")
        try await write("Bearer concurrent-reads", name)
        let storage = storage
        let reads = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<32 { group.addTask { try await storage.authenticationHeader(for: name) } }
            var all: [String?] = []
            for try await read in group { all.append(read) }
            return all
        }
        try expect(reads.count == 32 && reads.allSatisfy { $0 == "Bearer concurrent-reads" }, "concurrentReadsAgree", "32 concurrent reads did not all return the stored header")
        try await write(nil, name)
    }

    private func removedHeaderIsGone() async throws {
        let name = service("removed")
        try await write("Bearer soon-gone", name)
        _ = try await storage.authenticationHeader(for: name)
        try await write(nil, name)
        try await expectAbsent(name, "removedHeaderIsGone", "a removed header was still returned")
    }
}
