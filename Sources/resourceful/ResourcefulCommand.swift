import ArgumentParser

@main
struct ResourcefulCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resourceful",
        abstract: "Call REST APIs described as Resourceful requests.",
        subcommands: [DemoCommand.self, LoginCommand.self, LogoutCommand.self, StatusCommand.self]
    )
}
