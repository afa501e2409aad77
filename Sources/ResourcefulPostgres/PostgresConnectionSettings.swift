import Foundation

#if canImport(Glibc)
import Glibc
#endif
import NIOSSL
import PostgresNIO
import Resourceful

/// The `sharedState.postgres` keys, read and checked (``PostgresSharedStateFactory``).
struct PostgresConnectionSettings: Sendable {
    var host: String
    var port: Int
    var database: String
    var username: String
    /// The storage kind and name of the password's secret.
    var password: (APIConfig.StorageKind, String)?
    var requiresTLS: Bool
    var caFile: String?
    var options = PostgresSharedState.Options()
    /// The storage kind and name of the current sealing key's secret.
    var sealingKey: (APIConfig.StorageKind, String)?
    var previousSealingKeys: [String] = []
    var sharesTokens: Bool
    var whenUnavailable: PostgresTokenCache.WhenUnavailable = .askAlone
    var sharesCache: Bool
    var cacheMaxBytes = 64 * 1024 * 1024

    /// What a variable may not change to another value than the file's: where the password
    /// goes, and which secrets are read.
    static let fileOnlyKeys = [
        "host", "port", "database", "username", "tls", "caFile", "password.storage", "password.name",
        "sealingKey.storage", "sealingKey.name", "sealingKey.previousNames", "tokens", "cache",
    ]

    /// What a service that names another database must name itself: the top level's password
    /// and sealing keys are for the top level's database.
    static let serverKeys = ["host", "port", "database", "caFile"]
    static let credentialKeys = ["password.storage", "password.name", "sealingKey.storage", "sealingKey.name"]

    init(keys: ConfigurationKeys) throws(APIError) {
        for key in Self.fileOnlyKeys {
            try keys.refuseVariable(for: key, because: "it moves where the shared state's database password goes, or which secret is read")
        }
        // A service on another database server inherits none of the top level's credentials.
        if let own = Self.serverKeys.first(where: { keys.isSetByService($0) }) {
            for key in Self.credentialKeys where keys.topLevelString(key) != nil && !keys.isOwnedByService(key) {
                throw keys.invalid(key, expected: "its own value: the service names a database of its own (\(keys.full(own))), and the top level's is for the top level's")
            }
        }
        guard let host = try keys.nonEmptyString("host") else { throw keys.invalid("host", expected: "the PostgreSQL server's host name or address") }
        guard let database = try keys.nonEmptyString("database") else { throw keys.invalid("database", expected: "the database's name") }
        guard let username = try keys.nonEmptyString("username") else { throw keys.invalid("username", expected: "the role the instances log in as") }
        self.host = host
        self.database = database
        self.username = username
        port = try keys.int("port", in: 1...65535, unit: "port") ?? 5432
        password = try Self.secretName(keys.scoped(to: "password"))
        switch try keys.string("tls") ?? "require" {
        case "require": requiresTLS = true
        case "disable":
            guard Self.isLoopback(host) else {
                throw keys.invalid("tls", expected: "require for a host that is not this machine's (the password would cross the network in clear)")
            }
            requiresTLS = false
        default: throw keys.invalid("tls", expected: "require or disable")
        }
        caFile = try keys.path("caFile")
        if let timeout = try keys.seconds("statementTimeout", allowZero: false) { options.statementTimeout = timeout }
        if let interval = try keys.seconds("retryInterval", allowZero: false) { options.retryInterval = interval }
        if let refresh = try keys.seconds("breakerRefresh", allowZero: true) { options.breakerRefresh = refresh }
        if let lease = try keys.seconds("probeLease", allowZero: false) { options.probeLease = lease }
        if let lease = try keys.seconds("tokenLease", allowZero: false) { options.tokenLease = lease }
        let sealing = keys.scoped(to: "sealingKey")
        sealingKey = try Self.secretName(sealing)
        previousSealingKeys = try sealing.stringArray("previousNames") ?? []
        if !previousSealingKeys.isEmpty, sealingKey == nil {
            throw sealing.invalid("previousNames", expected: "none without a current key (storage and name)")
        }
        sharesTokens = try keys.bool("tokens") ?? (sealingKey != nil)
        switch try keys.string("whenUnavailable") ?? "askAlone" {
        case "askAlone": whenUnavailable = .askAlone
        case "fail": whenUnavailable = .fail
        default: throw keys.invalid("whenUnavailable", expected: "askAlone or fail")
        }
        switch try keys.string("budgetsWhenUnavailable") ?? "useMemory" {
        case "useMemory": options.budgetsWhenUnavailable = .useMemory
        case "fail": options.budgetsWhenUnavailable = .fail
        default: throw keys.invalid("budgetsWhenUnavailable", expected: "useMemory or fail")
        }
        sharesCache = try keys.bool("cache") ?? false
        cacheMaxBytes = try keys.int("cacheMaxBytes", in: 0...(1 << 40), unit: "bytes") ?? cacheMaxBytes
    }

    /// The storage kind and secret name under `keys` (`storage`, `name`): both or neither.
    static func secretName(_ keys: ConfigurationKeys) throws(APIError) -> (APIConfig.StorageKind, String)? {
        let storage = try keys.nonEmptyString("storage")
        let name = try keys.nonEmptyString("name")
        switch (storage, name) {
        case (nil, nil): return nil
        case (let storage?, let name?): return (APIConfig.StorageKind(rawValue: storage), name)
        case (nil, _): throw keys.invalid("storage", expected: "the storage kind that holds the secret 'name' names")
        case (_, nil): throw keys.invalid("name", expected: "the name of the secret in the storage")
        }
    }

    /// Whether `host` is this machine's own: an address of 127.0.0.0/8 or `::1`, or `localhost`
    /// (connected to as 127.0.0.1, whatever a resolver says). A name that only begins like one
    /// (`127.db.example`) is not.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else { return false }
        return UInt32(bigEndian: address.s_addr) >> 24 == 127
    }

    /// The client's configuration, logging in with `password`.
    func clientConfiguration(password: String?, keys: ConfigurationKeys) throws(APIError) -> PostgresClient.Configuration {
        var tls = PostgresClient.Configuration.TLS.disable
        if requiresTLS {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile {
                do {
                    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
                } catch {
                    throw keys.invalid("caFile", expected: "a readable file of PEM certificates")
                }
            }
            tls = .require(configuration)
        }
        let address = host == "localhost" ? "127.0.0.1" : host == "[::1]" ? "::1" : host
        return PostgresClient.Configuration(host: address, port: port, username: username, password: password, database: database, tls: tls)
    }
}
