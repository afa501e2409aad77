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

    /// Parses and runs the command line; `-V`/`--version` after a command (`delete users/9 -V`)
    /// is refused before anything runs, rather than taken by the tool's own flag while the
    /// command goes on to send its request.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let command = arguments.first, !command.hasPrefix("-"),
            let misplaced = arguments.dropFirst().prefix(while: { $0 != "--" }).first(where: { $0 == "-V" || $0 == "--version" })
        {
            StandardStreams.error("resourceful: \(misplaced) is an option of resourceful itself, not of '\(command)': run resourceful \(misplaced)\n")
            Self.exit(withError: ExitCode.validationFailure)
        }
        if let refusal = CurlHabits.refusal(arguments) {
            StandardStreams.error(refusal + "\n")
            Self.exit(withError: ExitCode.validationFailure)
        }
        await Self.main(arguments)
    }
}
