public import Resourceful

/// Why a cassette could not answer or keep an exchange. It names requests by method and URL with
/// masked query values, never with header values or bodies.
public struct CassetteError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// No recorded exchange matches the request (or all that match were used), and the
        /// cassette may not use the network.
        case noRecording
        /// The cassette file could not be read, or is not a HAR file.
        case unreadableFile
        /// The cassette file could not be written.
        case unwritableFile
    }

    /// What went wrong.
    public var kind: Kind
    /// The request, the closest recording and why it did not match; or the file and the reason.
    public var detail: String

    package init(_ kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The detail, prefixed by the kind.
    public var description: String {
        switch kind {
        case .noRecording: "no recording: \(detail)"
        case .unreadableFile: "unreadable cassette: \(detail)"
        case .unwritableFile: "unwritable cassette: \(detail)"
        }
    }
}

// A cassette that cannot answer or keep an exchange will not on a second attempt either: the call
// fails at once, not after the retry policy's attempts.
extension CassetteError: FinalTransportFailure {}
