import Configuration

/// A configuration provider over JSON bytes already read, so that a file is opened once, checked
/// on that descriptor (``RegularFile``), and parsed from those bytes: `FileProvider` would open
/// the path again.
struct JSONDataProvider: ConfigProvider {
    private let contents: JSONSnapshot

    /// Parses `bytes`; throws when they are not a JSON object.
    init(_ bytes: [UInt8]) throws {
        // The name `FileProvider` gives its snapshots, so messages read the same.
        contents = try JSONSnapshot(data: bytes.span.bytes, providerName: "FileProvider<JSONSnapshot>", parsingOptions: .default)
    }

    var providerName: String {
        contents.providerName
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try contents.value(forKey: key, type: type)
    }

    nonisolated(nonsending) func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot {
        contents
    }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
