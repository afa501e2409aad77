import ArgumentParser
import Resourceful

@main
struct ResourcefulCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resourceful",
        abstract: "Call REST APIs described as Resourceful requests.",
        discussion: CallExitCode.summary,
        subcommands: [
            ShowCommand.self, IndexCommand.self, CreateCommand.self, UpdateCommand.self, DeleteCommand.self,
            LoginCommand.self, LogoutCommand.self, StatusCommand.self, CredentialsCommand.self, DemoCommand.self,
            CompletionCommand.self,
        ] + generatorCommands
    )

    @Flag(name: [.customShort("V"), .customLong("version")], help: "Print the version (the one the User-Agent header sends) and exit.")
    var version = false

    func run() async throws {
        guard version else { throw CleanExit.helpRequest(self) }
        print("resourceful \(UserAgent.version)")
    }
}
