public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// nginx from Debian's packages (`make setup` installs `nginx-light`), started on a free port of
/// 127.0.0.1 with a configuration of the test's own, in a scratch directory.
public struct Nginx: Sendable {
    /// The scratch directory: configuration, pid, logs, and `www/`, the document root.
    public let directory: URL
    /// The port nginx listens on.
    public private(set) var port: Int
    /// nginx's master process, running in the foreground as a child of the tests.
    public var pid: Int32 = 0

    /// The document root, readable by nginx's unprivileged worker.
    public var root: URL { directory.appendingPathComponent("www") }

    /// Starts nginx with `server` as the body of its one `server { … }` block (the `listen`
    /// directive is added: `listen 127.0.0.1:<port>` plus `listenOptions`, such as `ssl`) and
    /// `http` among the directives of its `http { … }` block (a `limit_req_zone`), after
    /// `prepare` has filled the document root; waits until the port accepts connections.
    public static func start(
        listenOptions: String = "",
        http: String = "",
        server: String,
        prepare: (Nginx) throws -> Void = { _ in }
    ) async throws -> Nginx {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-nginx-\(UUID().uuidString)")
        var nginx = Nginx(directory: directory, port: 0)
        try FileManager.default.createDirectory(at: nginx.root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
        try prepare(nginx)
        // Another server may take the free port before nginx binds it: nginx then exits, and a new
        // port is tried.
        for attempt in 1...5 {
            nginx.port = try freePort()
            try nginx.writeConfiguration(listenOptions: listenOptions, http: http, server: server)
            do {
                try await nginx.launch()
                return nginx
            } catch is PortTaken where attempt < 5 {
                continue
            }
        }
        throw PortTaken()
    }

    /// nginx exited before it listened: its port was taken meanwhile.
    struct PortTaken: Error {}

    private func writeConfiguration(listenOptions: String, http: String, server: String) throws {
        let path = directory.path
        let configuration = """
            worker_processes 1;
            daemon off;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 256; }
            http {
                log_format connections '$connection $server_protocol $status $request_method $uri';
                access_log \(path)/access.log connections;
                client_body_temp_path \(path)/tmp;
                proxy_temp_path \(path)/tmp;
                fastcgi_temp_path \(path)/tmp;
                uwsgi_temp_path \(path)/tmp;
                scgi_temp_path \(path)/tmp;
                default_type application/json;
            \(http)
                server {
                    listen 127.0.0.1:\(port) \(listenOptions);
                    root \(root.path);
            \(server)
                }
            }
            """
        try configuration.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
    }

    /// Runs nginx with the configuration in `directory` and waits until its port accepts
    /// connections.
    private mutating func launch() async throws {
        // In the foreground, a child of this process: a daemon's parent exits at once, and
        // Foundation's `Process` does not always see that.
        let process = Process()
        SignalMask.configure(process, "/usr/sbin/nginx", ["-c", directory.appendingPathComponent("nginx.conf").path, "-p", directory.path])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier
        do {
            // nginx writes its pid file once its sockets are bound: until then the port may be
            // another server's. One that could not bind exits instead.
            let pidFile = directory.appendingPathComponent("nginx.pid")
            let deadline = ContinuousClock.now + .seconds(60)
            while (try? String(contentsOf: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) != "\(pid)" {
                guard process.isRunning else { throw PortTaken() }
                guard ContinuousClock.now < deadline else { throw POSIXError(.ETIMEDOUT) }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Self.waitForPort(port)
        } catch let failure as PortTaken {
            throw failure
        } catch {
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            kill(pid, SIGKILL)
            throw Command.Failed(result: .init(status: -1, output: log, duration: .zero))
        }
    }

    /// Stops nginx as a restart does, keeping its directory and port, and returns once the port
    /// refuses connections.
    public func halt() async throws {
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(30)
        while LoopbackSocket.accepts(port), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // The master process is a child of this one: reaped, it leaves no zombie behind.
        var status: Int32 = 0
        waitpid(pid, &status, WNOHANG)
    }

    /// Starts nginx again after ``halt()``, on the same port with the same configuration.
    public mutating func resume() async throws {
        try await launch()
    }

    /// Makes every file under the document root readable by nginx's worker.
    public func makeReadable() throws {
        let files = FileManager.default.enumerator(atPath: root.path)?.allObjects.compactMap { $0 as? String } ?? []
        for file in files {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.appendingPathComponent(file).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root.path)
    }

    /// The requests nginx has logged: connection number, protocol (`HTTP/1.1`, `HTTP/2.0`),
    /// status, method and path, separated by spaces.
    public var accessLog: [String] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init)
    }

    /// How many requests nginx has logged.
    public var requestCount: Int {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").count
    }

    /// How many requests nginx has logged, once it has logged `expected` or `timeout` has passed:
    /// nginx writes a request's line after its answer is sent, so a client may read the answer
    /// before the line is there.
    public func requestCount(reaching expected: Int, timeout: Duration = .seconds(10)) async -> Int {
        let deadline = ContinuousClock.now + timeout
        while requestCount < expected, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return requestCount
    }

    /// Stops nginx and removes the scratch directory.
    public func stop() async throws {
        kill(pid, SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    /// A port of 127.0.0.1 that nothing listened on a moment ago.
    public static func freePort() throws -> Int {
        let (descriptor, port) = try LoopbackSocket.bound(listening: nil)
        close(descriptor)
        return port
    }

    /// Polls until `port` accepts a connection, for at most `timeout` (generous: a loaded machine
    /// may take long to start a server).
    public static func waitForPort(_ port: Int, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if LoopbackSocket.accepts(port) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw POSIXError(.ETIMEDOUT)
    }
}
