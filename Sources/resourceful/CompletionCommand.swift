import ArgumentParser

/// `resourceful completion <shell>`: the shell completion script, for the user to install.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Print the completion script of bash, zsh or fish.",
        discussion: """
            Load it for this session:    source <(resourceful completion bash)
            Install it for bash:         resourceful completion bash > ~/.local/share/bash-completion/completions/resourceful
            Install it for zsh:          resourceful completion zsh > "${fpath[1]}/_resourceful"
            Install it for fish:         resourceful completion fish > ~/.config/fish/completions/resourceful.fish
            """
    )

    @Argument(help: ArgumentHelp("The shell: bash, zsh or fish.", valueName: "shell"))
    var shell: String

    func validate() throws {
        guard CompletionShell(rawValue: shell) != nil else {
            throw ValidationError("no completion script for '\(shell)': give bash, zsh or fish")
        }
    }

    func run() throws {
        guard let shell = CompletionShell(rawValue: shell) else { return }
        print(ResourcefulCommand.completionScript(for: shell))
    }
}
