public import Foundation

/// How ``API/download(_:to:options:progress:)`` writes its file: a cap on its size, and whether an
/// interrupted download keeps what it wrote for the next one to resume.
///
/// ```swift
/// var options = DownloadOptions()
/// options.maxBytes = 2 << 30              // refuse a body over 2 GiB
/// options.keepsPartialFile = true         // curl's `-C -`: a rerun continues where this one stopped
/// let result = try await api.download(ReleaseAsset(id: 42), to: URL(filePath: "release.tar.gz", directoryHint: .notDirectory), options: options)
/// ```
public struct DownloadOptions: Sendable, Hashable {
    /// The largest body the download writes, in bytes (curl's `--max-filesize`); `nil`, the
    /// default, for no limit but the disk.
    ///
    /// A `Content-Length` (or a `206`'s `Content-Range` total) above it is refused before a byte
    /// is written; a body without one fails at the first byte past it. Either way the download
    /// throws ``APIError/Kind/responseTooLarge`` and removes what it wrote. A negative value is
    /// refused with ``APIError/Kind/invalidRequest`` before anything is sent.
    public var maxBytes: Int?

    /// Whether a download that stops before its end (cancelled, timed out, the connection lost, the
    /// process killed, the local disk full or failing) keeps what it wrote, so that the next download to the same destination with
    /// this option set resumes it; `false`, the default, removes it.
    ///
    /// The part is kept beside the destination as ``partialFile(for:)`` (mode 0600), with the
    /// validator `If-Range` needs (a strong `ETag` or `Last-Modified`) and the body's size in
    /// ``partialStateFile(for:)`` (mode 0600; the request is named there only by a SHA-256
    /// digest). A part is resumed only when both files are regular files of this user with one
    /// link, the state names the same request, and the server confirms the version (`If-Range`);
    /// otherwise the download starts again from the first byte. A part is kept only when the
    /// server gave a validator and a `Content-Length`: without them nothing could resume it. It is
    /// removed when the body is refused (too large, a `206` that does not continue it, a status
    /// other than a server error). When the server's first answer to a kept part is a `416` or a
    /// `206` that does not continue it (another range, size or version), the download starts
    /// again from the first byte. While a download writes it, the part is locked (`flock`): a
    /// second download to the same destination fails with ``APIError/Kind/file`` instead of
    /// writing into it. A download without this option that writes the destination whole
    /// removes a part kept beside it (and its state), unless a download holds it: the part is
    /// older than the file.
    public var keepsPartialFile: Bool

    /// Options with `maxBytes` (`nil`: no limit) and `keepsPartialFile`.
    public init(maxBytes: Int? = nil, keepsPartialFile: Bool = false) {
        self.maxBytes = maxBytes
        self.keepsPartialFile = keepsPartialFile
    }

    /// Where a download to `destination` with ``keepsPartialFile`` keeps its part: the hidden
    /// file `.NAME.partial` beside it.
    public static func partialFile(for destination: URL) -> URL {
        let path = destination.standardizedFileURL.path
        let folder = (path as NSString).deletingLastPathComponent
        return URL(fileURLWithPath: folder + "/." + (path as NSString).lastPathComponent + ".partial", isDirectory: false)
    }

    /// Where a download to `destination` with ``keepsPartialFile`` keeps what resuming its part
    /// needs (the validator, the size, a digest of the request): `.NAME.partial.state` beside it.
    public static func partialStateFile(for destination: URL) -> URL {
        URL(fileURLWithPath: partialFile(for: destination).path + ".state", isDirectory: false)
    }
}
