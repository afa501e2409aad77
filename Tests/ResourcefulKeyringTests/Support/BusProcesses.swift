import Foundation

/// The live processes of a private bus started in a directory: its `dbus-daemon`, whose command
/// line names the directory, and every process whose environment holds the bus's address or a
/// home inside the directory (the keyring, and commands run on the bus). Zombies, which have
/// ended and only wait to be collected, are not counted.
enum BusProcesses {
    static func of(_ directory: URL) -> [Int32] {
        let dir = directory.standardizedFileURL.path
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return pids.filter { pid in
            guard pid != getpid(), !isZombie(pid) else { return false }
            let cmdline = fields(pid, "cmdline")
            let environ = fields(pid, "environ")
            return cmdline.contains { $0.contains("\(dir)/bus.conf") }
                || environ.contains { $0.hasPrefix("DBUS_SESSION_BUS_ADDRESS=unix:path=\(dir)/") || $0.hasPrefix("HOME=\(dir)/") }
        }
    }

    /// Whether `pid` blocks SIGTERM (a TERM sent to stop it would never be seen).
    static func blocksTerm(_ pid: Int32) -> Bool {
        guard let line = status(pid).first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << UInt64(SIGTERM - 1)) != 0
    }

    static func isZombie(_ pid: Int32) -> Bool {
        guard let line = status(pid).first(where: { $0.hasPrefix("State:") }) else { return true }
        return line.dropFirst("State:".count).trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// The private bus directory named by a `DBUS_SESSION_BUS_ADDRESS` the script wrote
    /// (`unix:path=DIR/socket/dbus-…`).
    static func directory(ofAddress address: String) -> URL? {
        guard let start = address.range(of: "unix:path="), let socket = address.range(of: "/socket/", range: start.upperBound..<address.endIndex) else { return nil }
        return URL(fileURLWithPath: String(address[start.upperBound..<socket.lowerBound]))
    }

    private static func status(_ pid: Int32) -> [String] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    private static func fields(_ pid: Int32, _ file: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(file)") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }
}
