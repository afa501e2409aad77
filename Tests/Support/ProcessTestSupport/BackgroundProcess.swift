public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A server program run in the foreground as a child of the tests, listening on a port of
/// 127.0.0.1; ``stop()`` ends it and waits until it has exited. One that is released without
/// ``stop()`` (a test that threw) is killed.
public final class BackgroundProcess: Sendable {
    /// The port it listens on.
    public let port: Int
    private let pid: Int32
    private let exited: Event

    /// Starts `executable` with `arguments` (which should make it listen on `port`) and waits until
    /// the port accepts connections (for up to `readiness`, generous for a loaded machine); its
    /// output goes to `log`.
    public init(_ executable: String, _ arguments: [String], port: Int, log: URL, readiness: Duration = .seconds(60)) async throws {
        self.port = port
        let process = Process()
        // Started from a test's thread, a child inherits a signal mask that blocks SIGTERM, and
        // would never see ``stop()``: it starts with every signal unblocked.
        SignalMask.configure(process, executable, arguments)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let exited = Event()
        process.terminationHandler = { _ in exited.happen() }
        try process.run()
        pid = process.processIdentifier
        self.exited = exited
        do {
            try await Nginx.waitForPort(port, timeout: readiness)
        } catch {
            kill(process.processIdentifier, SIGKILL)
            await exited.wait()
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw Command.Failed(result: .init(status: -1, output: "\(executable) did not listen on \(port): \(text)", duration: .zero))
        }
    }

    /// Sends `signal` (SIGTERM unless given) and waits for the program to exit (it may write files as it ends); one
    /// still running after `grace` is killed.
    public func stop(grace: Duration = .seconds(30), signal: Int32 = SIGTERM) async {
        guard !exited.hasHappened else { return }
        kill(pid, signal)
        await exited.wait(timeout: grace)
        if !exited.hasHappened {
            kill(pid, SIGKILL)
            await exited.wait()
        }
    }

    /// Sends `signal` to the program and to the processes it started (its direct children), as
    /// `SIGSTOP` and `SIGCONT` need to stop a server that forks a process per connection.
    public func signalWithChildren(_ signal: Int32) {
        guard !exited.hasHappened else { return }
        kill(pid, signal)
        for child in Self.children(of: pid) { kill(child, signal) }
    }

    /// The processes whose parent is `parent`, from `/proc`.
    static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // `pid (name) state ppid …`: the name may hold spaces, the fields after it do not.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && Int32(fields[1]) == parent ? pid : nil
        }
    }

    deinit {
        if !exited.hasHappened { kill(pid, SIGKILL) }
    }
}

/// Python tools the tests run, from the project's own virtual environment (`make setup`
/// installs them into `.build/python`).
public enum PythonTools {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of `name` in the virtual environment's `bin`.
    public static func path(_ name: String) -> String {
        root.appendingPathComponent(".build/python/bin/\(name)").path
    }
}
