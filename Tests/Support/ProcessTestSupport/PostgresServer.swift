public import Foundation
public import Testing
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// PostgreSQL from Debian's packages (`make setup` installs `postgresql`): a cluster made by
/// `initdb` in a scratch folder, as an unprivileged user (`nobody` when the tests run as root, as
/// PostgreSQL refuses root), listening on a free port of 127.0.0.1 with a password (SCRAM), in the
/// foreground as a child of the tests. ``stop()`` ends it on every path of its suite
/// (``PostgresTrait``).
public final class PostgresServer: Sendable {
    /// The role the tests connect as, and its database.
    public let username = "resourceful"
    /// The role's password (random, never printed).
    public let password: String
    /// The port it listens on.
    public let port: Int
    /// The scratch folder: the cluster, its password file and log.
    public let directory: URL
    private let server = Mutex<BackgroundProcess?>(nil)

    /// Makes a cluster and starts it; waits until it accepts connections.
    public init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-postgres-\(UUID().uuidString)")
        password = UUID().uuidString + UUID().uuidString
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let passwordFile = directory.appendingPathComponent("password")
        try password.write(to: passwordFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: passwordFile.path)
        let bin = try Self.binaries()
        let (program, arguments) = Self.unprivileged(
            bin + "/initdb",
            [
                "-D", directory.appendingPathComponent("data").path, "-U", "resourceful", "--auth=scram-sha-256", "--pwfile=\(passwordFile.path)", "-E", "UTF8",
                "--no-sync", "--no-instructions",
            ])
        let initdb = try await Command.run(program, arguments)
        guard initdb.status == 0 else { throw Command.Failed(result: initdb) }
        port = try Nginx.freePort()
        try await start()
    }

    private var data: String { directory.appendingPathComponent("data").path }

    /// Starts the server (again, after ``halt()``), on the same port, and waits until it listens.
    public func start() async throws {
        let bin = try Self.binaries()
        let (program, arguments) = Self.unprivileged(
            bin + "/postgres",
            [
                "-D", data, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200",
            ])
        let process = try await BackgroundProcess(
            program, arguments,
            port: port,
            log: directory.appendingPathComponent("postgres.log")
        )
        server.withLock { $0 = process }
        // The port opens before the server takes connections (it may still be recovering):
        // ready once pg_isready says it accepts them.
        let deadline = ContinuousClock.now + .seconds(60)
        while try await Command.run(bin + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(port)"]).status != 0 {
            guard ContinuousClock.now < deadline else {
                await halt()
                throw Command.Failed(result: .init(status: -1, output: "PostgreSQL did not accept connections on \(port)", duration: .zero))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops the server at once (`SIGQUIT`, as a crash would look to its clients); ``start()``
    /// starts it again with the same data.
    public func halt() async {
        let process = server.withLock { current -> BackgroundProcess? in
            defer { current = nil }
            return current
        }
        await process?.stop(signal: SIGQUIT)
    }

    /// Stops every process of the server where it stands (`SIGSTOP`): connections stay open and
    /// nothing answers, as a server that hangs; ``thaw()`` lets it go on.
    public func freeze() {
        server.withLock { $0 }?.signalWithChildren(SIGSTOP)
    }

    /// Lets a server ``freeze()`` stopped go on.
    public func thaw() {
        server.withLock { $0 }?.signalWithChildren(SIGCONT)
    }

    /// Stops the server and removes its folder.
    public func stop() async {
        let process = server.withLock { current -> BackgroundProcess? in
            defer { current = nil }
            return current
        }
        await process?.stop(signal: SIGINT)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The folder of Debian's PostgreSQL programs (the newest version installed).
    static func binaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw Command.Failed(result: .init(status: -1, output: "PostgreSQL is not installed (make setup installs it)", duration: .zero))
        }
        return "\(root)/\(newest)/bin"
    }

    /// `program` with `arguments`, run as `nobody` when the tests run as root.
    static func unprivileged(_ program: String, _ arguments: [String]) -> (String, [String]) {
        guard getuid() == 0 else { return (program, arguments) }
        return ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", program] + arguments)
    }

    /// The server of the suite being run (``PostgresTrait``).
    @TaskLocal public static var current: PostgresServer?
}

/// Runs a PostgreSQL server once around a whole suite; its tests find it in
/// ``PostgresServer/current``.
public struct PostgresTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try await PostgresServer()
        do {
            try await PostgresServer.$current.withValue(server) { try await function() }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

extension Trait where Self == PostgresTrait {
    /// A PostgreSQL server, started once for the suite.
    public static var postgres: PostgresTrait { PostgresTrait() }
}
