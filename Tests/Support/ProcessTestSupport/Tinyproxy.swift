public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// tinyproxy (Debian's `tinyproxy`), a real forward proxy on 127.0.0.1 in the foreground, with
/// its own configuration and log in a scratch directory.
public struct Tinyproxy: Sendable {
    /// The scratch directory.
    public let directory: URL
    /// The port it listens on.
    public let port: Int
    private var pid: Int32 = 0

    /// The proxy's URL, `http://127.0.0.1:<port>`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts tinyproxy; with `basicAuth` it answers 407 to requests without those credentials.
    public static func start(basicAuth: (user: String, password: String)? = nil) async throws -> Tinyproxy {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var proxy = Tinyproxy(directory: directory, port: try Nginx.freePort())
        var configuration = """
            Port \(proxy.port)
            Listen 127.0.0.1
            Timeout 30
            LogFile "\(directory.path)/tinyproxy.log"
            LogLevel Info
            MaxClients 100

            """
        if let basicAuth { configuration += "BasicAuth \(basicAuth.user) \(basicAuth.password)\n" }
        let file = directory.appendingPathComponent("tinyproxy.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        SignalMask.configure(process, "/usr/bin/tinyproxy", ["-d", "-c", file.path])
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        proxy.pid = process.processIdentifier
        do {
            try await Nginx.waitForPort(proxy.port)
        } catch {
            kill(proxy.pid, SIGKILL)
            throw error
        }
        return proxy
    }

    /// The requests the proxy was asked to carry, such as `CONNECT 127.0.0.1:8443 HTTP/1.1` or
    /// `GET http://127.0.0.1:8080/v1/x HTTP/1.1`.
    public var requests: [String] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): ", options: .backwards), line.contains("Request (file descriptor") else { return nil }
            return String(line[range.upperBound...])
        }
    }

    /// The whole log, to check what it does not hold.
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
    }

    /// Stops tinyproxy and removes the scratch directory.
    public func stop() async throws {
        kill(pid, SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }
}
