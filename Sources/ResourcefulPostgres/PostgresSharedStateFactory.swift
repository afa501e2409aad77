import Foundation
import Logging
import NIOSSL
import PostgresNIO
public import Resourceful

/// The `postgres` kind of shared state: a ``PostgresSharedState`` from the `sharedState.postgres`
/// keys, its password and sealing keys from storages named by kind, run until ``API/shutdown()``.
///
/// ```json
/// "sharedState": {
///     "kind": "postgres",
///     "postgres": {
///         "host": "db.internal", "database": "orders", "username": "orders",
///         "password": {"storage": "file", "name": "postgres-password"},
///         "sealingKey": {"storage": "file", "name": "state-key-2026-11"}
///     }
/// }
/// ```
/// ```swift
/// let deps = try await APIDependencies.live(
///     environment: "production", storageFactories: [OAuth2StorageFactory()], sharedStateFactories: [PostgresSharedStateFactory()])
/// let api = API(dependencies: deps)
/// ```
///
/// The keys under `sharedState.postgres`:
/// - `host`, `database`, `username` (required), `port` (5432);
/// - `password.storage` and `password.name`: the storage kind (`file`, `environment`, `keyring`)
///   and the secret's name; none for a server that asks for none;
/// - `tls`: `require` (the default: verified against the system's roots, or `caFile`'s
///   certificates) or `disable`, for a loopback host only;
/// - `statementTimeout`, `retryInterval`, `breakerRefresh`, `probeLease`, `tokenLease`: seconds
///   (``PostgresSharedState/Options``);
/// - `sealingKey.storage`, `sealingKey.name` and `sealingKey.previousNames`: the secrets (64 hex
///   digits, or base64 of 32 bytes) rows holding tokens and credentialed answers are sealed with
///   (``SharedStateKeys``), each known by its name; new rows under `name`'s;
/// - `tokens`: whether OAuth 2 tokens are shared (`true` when a sealing key is given; they are
///   never kept unsealed): `client_credentials` tokens, and the refresh tokens of an OAuth 2
///   storage whose `refreshTokenStorage` is `sharedState` (``PostgresRefreshTokenStorage``);
///   `whenUnavailable` (`askAlone` or `fail`, ``PostgresTokenCache/WhenUnavailable``);
/// - `budgetsWhenUnavailable`: `useMemory` or `fail` (``PostgresSharedState/Options/budgetsWhenUnavailable``);
/// - `cache`: whether ``SharedState/httpCache`` holds a ``PostgresHTTPCacheStorage`` (`false`),
///   of at most `cacheMaxBytes` (64 MiB).
///
/// An environment variable cannot change where the password goes (`host`, `port`, `database`,
/// `username`, `tls`, `caFile`) nor which secrets are read, to another value than the file's.
public struct PostgresSharedStateFactory: SharedStateFactory {
    /// A factory.
    public init() {}

    /// `postgres`.
    public var kind: String { "postgres" }

    /// The shared state the `sharedState.postgres` keys describe, its client running.
    public func makeSharedState(_ context: SharedStateContext) async throws(APIError) -> SharedState {
        let keys = context.keys
        let settings = try PostgresConnectionSettings(keys: keys)
        var password: String?
        if let (storage, name) = settings.password {
            password = try await Self.secret(name, in: storage, key: "password", context: context)
        }
        var sealing: SharedStateKeys?
        if let (storage, name) = settings.sealingKey {
            var material: [String: [UInt8]] = [:]
            for id in [name] + settings.previousSealingKeys {
                let text = try await Self.secret(id, in: storage, key: "sealingKey", context: context)
                guard let bytes = Self.keyBytes(text) else {
                    throw keys.invalid("sealingKey.name", expected: "secrets of 64 hex digits or base64 of 32 bytes (the one named '\(id)' is neither)")
                }
                material[id] = bytes
            }
            do {
                sealing = try SharedStateKeys(current: name, keys: material)
            } catch {
                throw keys.invalid("sealingKey.name", expected: error.description)
            }
        }
        guard !settings.sharesTokens || sealing != nil else {
            throw keys.invalid("tokens", expected: "false, or a sealingKey to seal the shared tokens with")
        }
        let configuration = try settings.clientConfiguration(password: password, keys: keys)
        let shared = PostgresSharedState(configuration: configuration, options: settings.options, logger: context.logger)
        let running = Task { await shared.run() }
        let tokens: (any SharedTokenCache)? =
            settings.sharesTokens ? sealing.map { PostgresTokenCache(sharedState: shared, keys: $0, whenUnavailable: settings.whenUnavailable) } : nil
        let cache = settings.sharesCache
            ? (storage: PostgresHTTPCacheStorage(sharedState: shared, keys: sealing, maxBytes: settings.cacheMaxBytes) as any HTTPCacheStorage,
                digestKey: sealing?.cacheDigestKey ?? HTTPCacheDigestKey.random())
            : nil
        let refreshTokens = settings.sharesTokens ? sealing.map { PostgresRefreshTokenStorage(sharedState: shared, keys: $0) } : nil
        return SharedState(
            rateLimits: shared.rateLimits, circuitBreakers: shared.circuitBreakers, tokens: tokens, httpCache: cache,
            refreshTokens: refreshTokens,
            onShutdown: {
                // Rotated refresh tokens still being written reach the store first.
                await shared.finishWrites()
                running.cancel()
                await running.value
            },
            // The API's shutdown ends the state after its transport: renewals begun while it
            // drains claim nothing, so that none is cut by the transport's shutdown.
            onDrain: { await shared.finishWrites() })
    }

    /// The secret `name` of the storage kind `storage`; an error naming `key` (never a value)
    /// when it cannot be read or there is none.
    static func secret(_ name: String, in storage: APIConfig.StorageKind, key: String, context: SharedStateContext) async throws(APIError) -> String {
        let secrets = try await context.secretStorage(storage, key: "\(key).storage")
        let found: String?
        do {
            found = try await secrets.secret(named: name)
        } catch let error as any SecretFreeDescription {
            throw context.keys.invalid("\(key).name", expected: "a secret the \(storage) storage can read (\(error.description))")
        } catch {
            throw context.keys.invalid("\(key).name", expected: "a secret the \(storage) storage can read")
        }
        guard let found, !found.isEmpty else {
            throw context.keys.invalid("\(key).name", expected: "the name of a secret the \(storage) storage holds ('\(name)' is not there)")
        }
        return found
    }

    /// 32 bytes from 64 hex digits or from base64; `nil` for anything else.
    static func keyBytes(_ text: String) -> [UInt8]? {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.utf8.count == 64, text.utf8.allSatisfy({ $0.isHexDigit }) {
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return bytes
        }
        guard let data = Data(base64Encoded: text), data.count >= 32 else { return nil }
        return Array(data)
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
