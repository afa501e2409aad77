import ArgumentParser

@main
struct ResourcefulCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resourceful",
        abstract: "Call REST APIs described as Resourceful requests.",
        subcommands: [
            ShowCommand.self, IndexCommand.self, CreateCommand.self, UpdateCommand.self, DeleteCommand.self,
            LoginCommand.self, LogoutCommand.self, StatusCommand.self, CredentialsCommand.self, DemoCommand.self,
        ] + generatorCommands
    )
}
