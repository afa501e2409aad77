/// curl's options that `resourceful`'s verbs do not offer, each refused in words with what to
/// use instead, rather than as an unknown option (exit 64 either way). A value given with one
/// (`-u name:password`) is never repeated.
enum CurlHabits {
    /// The commands that make a call.
    static let verbs: Set<String> = ["show", "index", "create", "update", "delete"]

    /// The verbs' options that take a value: the word after one is that value, not an option.
    static let valued: Set<String> = [
        "-d", "--data", "--env", "--config-directory", "--base-url", "--service", "--account", "-H", "--header", "--timeout",
        "--max-time", "--record", "--replay", "-o", "--output", "-C", "--continue-at", "--max-filesize",
    ]

    /// The message for the first of curl's options in a verb's `arguments` (the command line
    /// without the program's name), or `nil` when there is none.
    static func refusal(_ arguments: [String]) -> String? {
        guard let verb = arguments.first, verbs.contains(verb) else { return nil }
        var isValue = false
        for argument in arguments.dropFirst() {
            if argument == "--" { return nil }
            if isValue {
                isValue = false
                continue
            }
            if valued.contains(argument) {
                isValue = true
                continue
            }
            if let (name, advice) = advice(for: argument) { return "resourceful: \(name) is curl's, not resourceful's: \(advice)" }
        }
        return nil
    }

    /// The option `argument` is (without any value written into it) and what to use instead.
    static func advice(for argument: String) -> (String, String)? {
        if argument == "-X" || argument == "--request" || argument.hasPrefix("--request=") || (argument.hasPrefix("-X") && !argument.hasPrefix("--")) {
            return (
                argument.hasPrefix("--") ? "--request" : "-X",
                "the verb names the method (show and index send GET, create POST, update PUT or PATCH with --patch, delete DELETE)"
            )
        }
        if argument == "-I" || argument == "--head" {
            return (argument, "a HEAD request is not offered; -i prints the answer's status line and header fields before its body")
        }
        if argument == "-k" || argument == "--insecure" {
            return (
                argument,
                "certificate checks are not turned off from the command line; trust the server's certificate with http.tls.caFile in the configuration"
            )
        }
        if argument == "--user" || argument.hasPrefix("--user=") || (argument.hasPrefix("-u") && !argument.hasPrefix("--")) {
            return (
                argument.hasPrefix("--") ? "--user" : "-u",
                "a password on the command line is seen by every user of the machine; store the credential with 'resourceful login' and name it with --account, or configure a storage"
            )
        }
        return nil
    }
}
