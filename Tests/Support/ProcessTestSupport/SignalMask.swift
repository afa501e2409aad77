import Foundation

/// Children started from a test's thread inherit its signal mask, and the cooperative pool's
/// threads block SIGTERM: a child started through ``SignalMask/unblocked(_:_:)`` starts with every
/// signal unblocked, so that a TERM sent to stop it is seen. Perl (part of every Debian system)
/// clears the mask, then replaces itself with the program.
enum SignalMask {
    static let perl = "/usr/bin/perl"

    /// The executable and arguments that run `executable` with `arguments` and an empty signal mask.
    static func unblocked(_ executable: String, _ arguments: [String]) -> (executable: URL, arguments: [String]) {
        let script = #"sigprocmask(SIG_SETMASK, POSIX::SigSet->new); exec { $ARGV[0] } @ARGV or die "exec $ARGV[0]: $!\n""#
        return (URL(fileURLWithPath: perl), ["-MPOSIX", "-e", script, executable] + arguments)
    }

    /// Points `process` at `executable` with `arguments`, started with an empty signal mask.
    static func configure(_ process: Process, _ executable: String, _ arguments: [String]) {
        let launch = unblocked(executable, arguments)
        process.executableURL = launch.executable
        process.arguments = launch.arguments
    }
}
