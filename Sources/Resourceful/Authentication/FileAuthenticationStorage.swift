package import Logging

/// Credentials from files, one per service, under a directory: secrets mounted by the
/// orchestrator, such as Kubernetes or Docker secrets under `/run/secrets`.
///
/// The file for the service `example-api` is `<directory>/example-api`. It holds a bare token, sent
/// as `<scheme> <token>` (`Bearer …` by default), or the whole `Authorization` value when `scheme`
/// is `nil`; trailing newlines are trimmed.
///
/// A file that is replaced while the program runs, as orchestrators rotate secrets (by renaming a
/// new file over the old one, or by swapping a symlink), is picked up without a restart: a header
/// read less than ``refreshInterval`` ago is served from memory, and after that a `stat` of the
/// file tells whether it changed; the file is read again only when it did. Replace the file
/// atomically, so that a read never sees half of it.
///
/// A missing, empty, unreadable or too large file (``maximumBytes``), or one owned by another
/// user than this one or root, is an ``AuthenticationStorageError`` naming the path, never the
/// contents. A file that group or others may read is used, with a warning in the log once per
/// version of it (`chmod 600` it): orchestrators mount secrets `0644` or `0444`, and through
/// symlinks (which the storage follows, to see them rotated), so refusing them would refuse
/// their own mounts.
///
/// The file is read on a thread of its own, never on the cooperative pool, and a call waits for
/// it no longer than its deadline: a file on a mount that does not answer (a hung NFS or FUSE
/// file system) fails the call with ``APIError/Kind/timeout`` at its deadline, and holds one
/// thread per file however many calls ask for it meanwhile.
package final class FileAuthenticationStorage: AuthenticationStorage {
    private struct Entry {
        var header: String
        var identity: CredentialFile.Identity
        var checked: ContinuousClock.Instant
    }

    /// The directory holding one file per service.
    package let directory: String
    /// The scheme put before the file's token, or `nil` when the file holds the whole header.
    package let scheme: String?
    /// How long a header is served without looking at the file.
    package let refreshInterval: Duration
    /// The largest file accepted.
    package let maximumBytes: Int
    private let entries = Locked<[String: Entry]>([:])
    /// Where a file open to group or others is reported.
    private let logger: Logger?
    /// The versions of files already reported as open to others.
    private let warned = Locked<Set<CredentialFile.Identity>>([])
    /// The file system calls, which may block.
    private let access: CredentialFileAccess
    /// The reads under way, one per file, off the cooperative pool.
    private let reads = CredentialFileReads<String>()

    /// Creates a storage over `directory`, warning through `logger` of files others may read.
    package convenience init(
        directory: String, scheme: String? = "Bearer", refreshInterval: Duration = .seconds(1), maximumBytes: Int = 64 * 1024, logger: Logger? = nil
    ) {
        self.init(directory: directory, scheme: scheme, refreshInterval: refreshInterval, maximumBytes: maximumBytes, logger: logger, access: .system)
    }

    /// Creates a storage over `directory` whose file system calls are `access`'s.
    init(directory: String, scheme: String?, refreshInterval: Duration, maximumBytes: Int, logger: Logger?, access: CredentialFileAccess) {
        var directory = directory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        self.directory = directory
        self.scheme = scheme
        self.refreshInterval = refreshInterval
        self.maximumBytes = maximumBytes
        self.logger = logger
        self.access = access
    }

    /// Reads `path` (blocking) and warns, once per version of it, when group or others may read it, or
    /// when it is a symlink to a file outside the directory (an orchestrator's own links stay
    /// inside it).
    func load(_ path: String, lineBreaksInside: Bool = false) throws(AuthenticationStorageError) -> (value: String, identity: CredentialFile.Identity) {
        let file = try access.load(path, maximumBytes, lineBreaksInside)
        guard let logger else { return file }
        let leaves = CredentialFile.isSymlinkLeaving(path, directory: directory)
        guard file.identity.isOpenToOthers || leaves, warned.withLock({ $0.insert(file.identity).inserted }) else { return file }
        if file.identity.isOpenToOthers {
            logger.warning(
                "Credential file is readable by group or others: chmod 600 it, unless an orchestrator mounts it so",
                metadata: ["resourceful.file": .string(path), "resourceful.mode": .string("0" + String(file.identity.permissions, radix: 8))]
            )
        }
        if leaves {
            logger.warning(
                "Credential file is a symbolic link to a file outside its directory: whoever can change the link chooses the credential",
                metadata: ["resourceful.file": .string(path)]
            )
        }
        return file
    }

    /// The file that holds `service`'s credential.
    package func path(for service: String) -> String {
        directory == "/" ? "/\(service)" : "\(directory)/\(service)"
    }

    /// The header made from `service`'s file.
    ///
    /// A header read less than ``refreshInterval`` ago is served from memory; otherwise the file
    /// is looked at on a thread of its own, waited for until the deadline of the call asking
    /// (``DeadlineHonouringStorage/lookupDeadline``) or its cancellation.
    ///
    /// - Throws: ``AuthenticationStorageError`` when the file is missing, empty, unreadable or too
    ///   large, or the service name cannot name a file in the directory; ``APIError/Kind/timeout``
    ///   when the file system does not answer by the call's deadline; `CancellationError` when the
    ///   calling task is cancelled first.
    package func authenticationHeader(for service: String) async throws -> String? {
        let cached = entries.withLock { $0[service] }
        if let cached, ContinuousClock.now - cached.checked < refreshInterval { return cached.header }
        guard !service.isEmpty, !service.contains("/"), service != ".", service != ".." else {
            throw AuthenticationStorageError(kind: .invalidValue, source: "service \(service.debugDescription)", detail: "cannot name a file in \(directory)")
        }
        let path = path(for: service)
        return try await reads.value(for: "header " + path, deadline: lookupDeadline) { [self] in
            Result { () throws(AuthenticationStorageError) in try header(for: service, at: path) }
        }
    }

    /// The content of the file at `path`, line breaks inside kept (a PEM key), read as
    /// ``authenticationHeader(for:)`` reads its file: on a thread of its own, waited for until
    /// the deadline of the call asking or its cancellation.
    func secretFile(at path: String) async throws -> String {
        try await reads.value(for: "secret " + path, deadline: lookupDeadline) { [self] in
            Result { () throws(AuthenticationStorageError) in try load(path, lineBreaksInside: true).value }
        }
    }

    /// The header made from the file at `path`, kept for `service`: the one in memory when a
    /// `stat` says the file has not changed, else read again. Blocks while the file system does.
    private func header(for service: String, at path: String) throws(AuthenticationStorageError) -> String {
        let now = ContinuousClock.now
        if let entry = entries.withLock({ $0[service] }), (try? access.identity(path)) == entry.identity {
            entries.withLock { $0[service]?.checked = now }
            return entry.header
        }
        let file: (value: String, identity: CredentialFile.Identity)
        do {
            file = try load(path)
        } catch {
            entries.withLock { $0[service] = nil }
            throw error
        }
        let header = scheme.map { "\($0) \(file.value)" } ?? file.value
        entries.withLock { $0[service] = Entry(header: header, identity: file.identity, checked: now) }
        return header
    }
}
