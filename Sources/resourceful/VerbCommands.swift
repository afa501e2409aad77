import ArgumentParser
import Resourceful

struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "GET one resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.show, options) }
}

struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "index", abstract: "GET a list of resources.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.index, options) }
}

struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "POST a new resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.create, options) }
}

struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "PUT (or PATCH with --patch) a resource.")
    @OptionGroup var options: CallOptions
    @Flag(help: "Send PATCH instead of PUT.")
    var patch = false
    func run() async throws { try await CallRunner.run(.update, options, updateMethod: patch ? .patch : .put) }
}

struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "DELETE a resource.")
    @OptionGroup var options: CallOptions
    func run() async throws { try await CallRunner.run(.delete, options) }
}
