import Foundation
import ProcessTestSupport
import HTTPTypes
import ResourcefulKeyring
import ResourcefulTesting
import Testing

/// Each fault ends within its bound with the right error, through the real daemon and tool.
@Suite struct KeyringFaultTests {
    @Test func noBusAddressFailsAtOnce() async throws {
        // At once, not at the keyring's time limit: half of it leaves a loaded machine room.
        let timeout = Duration.seconds(120)
        let keyring = Keyring(timeout: timeout, environment: [:])
        let start = ContinuousClock.now
        let error = await #expect(throws: KeyringError.self) { _ = try await keyring.lookup(service: "s", account: "a") }
        #expect(error?.kind == .noSessionBus)
        #expect(error?.description.contains("DBUS_SESSION_BUS_ADDRESS") == true)
        #expect(ContinuousClock.now - start < timeout / 2)
    }

    @Test func toolWithoutABusSaysWhatToStart() async throws {
        let result = try await Command.run(PrivateBus.tool, ["status", "--service", "s", "--account", "a"])
        #expect(result.status == 3)
        #expect(result.output.contains("noSessionBus"))
        #expect(result.output.contains("dbus-run-session"))
    }

    @Test func busWithoutSecretService() async throws {
        try await PrivateBus.with(withKeyring: false) { bus in
            // Told at once that nothing provides the service, not after the time limit (half of
            // it leaves a loaded machine room to start the tool).
            let timeout = Duration.seconds(120)
            let result = try await bus.tool(["status", "--service", "s", "--account", "a", "--keyring-timeout", "\(timeout.components.seconds)"])
            #expect(result.status == 3)
            #expect(result.output.contains("noSecretService"))
            #expect(result.output.contains("gnome-keyring"))
            #expect(result.duration < timeout / 2)
        }
    }

    @Test func lockedCollectionIsAnErrorNotAMissingCredential() async throws {
        try await PrivateBus.with { bus in
            let stored = try await bus.tool(["login", "--service", "locked-svc", "--account", "a"], input: "locked-token-SECRET\n")
            #expect(stored.status == 0)
            let found = try await bus.tool(["status", "--service", "locked-svc", "--account", "a"])
            #expect(found.status == 0)
            try await bus.lockDefaultCollection()
            let locked = try await bus.tool(["status", "--service", "locked-svc", "--account", "a"])
            #expect(locked.status == 3)
            #expect(locked.output.contains("locked"))
            #expect(!locked.output.contains("No credential"))
            let missing = try await bus.tool(["status", "--service", "never-stored", "--account", "a"])
            #expect(missing.status == 3)
            for result in [stored, found, locked, missing] { #expect(!result.output.contains("locked-token-SECRET")) }
        }
    }

    @Test func frozenDaemonTimesOutWithinItsBound() async throws {
        try await PrivateBus.with { bus in
            let stored = try await bus.tool(["login", "--service", "frozen", "--account", "a"], input: "t\n")
            #expect(stored.status == 0)
            bus.signalKeyring(SIGSTOP)
            let timeout = Duration.seconds(1)
            let frozen = try await bus.tool(["status", "--service", "frozen", "--account", "a", "--keyring-timeout", "\(timeout.components.seconds)"])
            bus.signalKeyring(SIGCONT)
            #expect(frozen.status == 3)
            #expect(frozen.output.contains("timedOut"))
            // Ended by the keyring's time limit: without it the frozen daemon is waited for until
            // D-Bus gives up on the reply (25 s). The bound leaves a loaded machine room to start
            // the tool and still tells the two apart.
            #expect(frozen.duration < timeout * 2 + .seconds(10))
            let thawed = try await bus.tool(["status", "--service", "frozen", "--account", "a"])
            #expect(thawed.status == 0)
        }
    }

    /// A call's credential lookup ends at the call's deadline (1 s here), not at the keyring's own
    /// time limit (5 s), when the daemon hangs.
    @Test func aCallEndsAtItsDeadlineWhileTheKeyringHangs() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .status(.noContent))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-frozen-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/v1", "service": "frozen-call", "timeout": 1, "authentication": {"storages": ["keyring"]}}"#
            try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
            // After the thaw the daemon first works through what queued while it was stopped: the
            // next call gets a deadline that allows for that on a loaded machine.
            let relaxed = json.replacingOccurrences(of: #""timeout": 1,"#, with: #""timeout": 20,"#)
            try Data(relaxed.utf8).write(to: directory.appendingPathComponent("thawed.json"))
            try await PrivateBus.with { bus in
                let stored = try await bus.tool(["login", "--service", "frozen-call", "--account", "a"], input: "t\n")
                #expect(stored.status == 0)
                bus.signalKeyring(SIGSTOP)
                let call = try await bus.tool(["show", "me", "--account", "a", "--env", "test", "--config-directory", directory.path])
                bus.signalKeyring(SIGCONT)
                // A time-out of the call (exit 4), not a credentials failure (exit 3, the keyring's
                // own 5 s limit): the call's deadline ended the lookup.
                #expect(call.status == 4, "\(call.output)")
                #expect(call.output.contains("timeout"))
                // Twice the call's 1 s and room for a loaded machine to start the tool: still well
                // before D-Bus gives up on the frozen daemon's reply (25 s).
                #expect(call.duration < .seconds(1) * 2 + .seconds(10))
                #expect(server.requests.isEmpty)
                let thawed = try await bus.tool(["show", "me", "--account", "a", "--env", "thawed", "--config-directory", directory.path])
                #expect(thawed.status == 0, "\(thawed.output)")
                #expect(server.requests.first?.headerFields[.authorization] == "Bearer t")
            }
        }
    }

    @Test func loginLogoutAndStatusRoundTrip() async throws {
        try await PrivateBus.with { bus in
            #expect(try await bus.tool(["status", "--service", "cli", "--account", "ada"]).status == 1)
            let login = try await bus.tool(["login", "--service", "cli", "--account", "ada"], input: "cli-token-SECRET\n")
            #expect(login.status == 0)
            #expect(!login.output.contains("cli-token-SECRET"))
            let status = try await bus.tool(["status", "--service", "cli", "--account", "ada"])
            #expect(status.status == 0)
            #expect(!status.output.contains("cli-token-SECRET"))
            let logout = try await bus.tool(["logout", "--service", "cli", "--account", "ada"])
            #expect(logout.output.contains("Removed"))
            #expect(try await bus.tool(["status", "--service", "cli", "--account", "ada"]).status == 1)
            let again = try await bus.tool(["logout", "--service", "cli", "--account", "ada"])
            #expect(again.output.contains("No credential was stored"))
        }
    }
}
