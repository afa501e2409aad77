import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A download's file while it is written: a temporary file beside the destination (so that the
/// rename is atomic, on one file system), written on a thread of the download's own, `fsync`ed and renamed
/// into place by ``commit()``, removed by ``discard()``. The destination never holds part of a body.
///
/// A resumable one (``DownloadOptions/keepsPartialFile``, made by ``resumable(for:request:until:)``)
/// has a stable name and a state file beside it, both mode 0600, and is kept by ``keep()``.
///
/// Every file-system call runs on the download's own thread (an ``OffPoolWork/Worker``, made once
/// per download, not once per piece), and every wait for one is bounded: by the request's
/// time-out (`step`, as each silence of the server is), the download's deadline and its task's
/// cancellation, or (for what a stopped download still does: the last piece, the removal) by
/// ``finishingGrace``. A file system that hangs holds that thread, never
/// the cooperative pool nor NIO's shared thread pool (whose few threads other file work of the
/// process needs), and the download returns a typed error in time.
final class PartialFile: Sendable {
    let destination: String
    let temporary: String
    /// The file that says how to resume a kept part; `nil` for a temporary file.
    let stateFile: String?
    /// The open file, `-1` once closed: every use of it holds the lock, so that an operation
    /// whose wait was given up and that runs late never writes through a number reused since.
    private let descriptor: Descriptor
    /// The thread every file-system call of this download runs on, in order.
    private let worker: OffPoolWork.Worker
    /// The longest wait for one file-system call: the request's time-out.
    private let step: Duration
    /// Whether the state file now describes the part (``saveState(_:)``): a part without one is
    /// of no use and is removed rather than kept.
    private let described = Atomic<Bool>(false)

    /// What resuming a kept part needs: the validator for `If-Range`, the whole body's size, and
    /// how many of its bytes are in the part.
    struct ResumeState: Equatable {
        var validator: String
        var total: Int
        var written: Int
    }

    /// Creates the temporary file beside `destination`.
    ///
    /// - Throws: ``APIError/Kind/file`` naming the folder when it cannot be written.
    /// - Throws: ``APIError/Kind/timeout`` when the file system does not answer to a call within
    ///   `step` or before `deadline`, ``APIError/Kind/cancelled`` when the task is cancelled first.
    static func create(for destination: URL, until deadline: ContinuousClock.Instant, step: Duration) async throws(APIError) -> PartialFile {
        let worker = OffPoolWork.Worker()
        let (path, folder, name) = try await names(destination, on: worker, until: deadline, step: step)
        let temporary = folder + "/." + name + "." + String(UInt64.random(in: .min ... .max), radix: 36) + ".download"
        do {
            let descriptor = try await Self.run(on: worker, until: deadline, step: step, path: path) { () throws -> Int32 in
                // Readable by its owner alone while it is written; given its final mode at commit.
                let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                return descriptor
            } abandoned: { descriptor in
                // Opened after the download gave up waiting: nobody writes it.
                unlink(temporary)
                close(descriptor)
            }
            return PartialFile(destination: path, temporary: temporary, stateFile: nil, descriptor: descriptor, worker: worker, step: step)
        } catch {
            throw failure(error, "the folder \(folder) cannot be written")
        }
    }

    /// Opens (or creates) the kept part of a download of `request` (a digest naming it) to
    /// `destination`, locked for this download, with what resuming it needs when its state file
    /// describes it (`nil`: the part is empty, to be written from the first byte).
    ///
    /// - Throws: ``APIError/Kind/file`` when the part or its state is not a regular file of this
    ///   user with one link (another user's, a link, a FIFO…), when another download holds it, or
    ///   when the folder cannot be written.
    ///   ``APIError/Kind/timeout`` or ``APIError/Kind/cancelled`` as ``create(for:until:step:)``.
    static func resumable(
        for destination: URL, request: String, until deadline: ContinuousClock.Instant, step: Duration
    ) async throws(APIError) -> (PartialFile, ResumeState?) {
        let worker = OffPoolWork.Worker()
        let (path, folder, _) = try await names(destination, on: worker, until: deadline, step: step)
        let partial = DownloadOptions.partialFile(for: URL(fileURLWithPath: path, isDirectory: false)).path
        let stateFile = DownloadOptions.partialStateFile(for: URL(fileURLWithPath: path, isDirectory: false)).path
        do {
            let (descriptor, state) = try await Self.run(on: worker, until: deadline, step: step, path: path) { () throws -> (Int32, ResumeState?) in
                let descriptor = try openOwn(partial, flags: O_RDWR | O_CREAT, what: "the partial download")
                do {
                    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                        throw Refusal(detail: "\(partial) is being written by another download to \(path)")
                    }
                    // The lock is on the file the name gives now: a download that held it may have
                    // renamed it into place (or removed it) between the open and the lock, and its
                    // file must not be written again.
                    var status = stat()
                    var named = stat()
                    guard fstat(descriptor, &status) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    guard lstat(partial, &named) == 0, named.st_dev == status.st_dev, named.st_ino == status.st_ino else {
                        throw Refusal(detail: "\(partial) was just finished or removed by another download to \(path)")
                    }
                    let size = Int(status.st_size)
                    var state = size > 0 ? readState(stateFile, request: request) : nil
                    if let found = state, found.total >= size {
                        state?.written = size
                    } else {
                        // Nothing says how to continue it (or it is longer than its body): from the start.
                        state = nil
                        guard ftruncate(descriptor, 0) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    }
                    return (descriptor, state)
                } catch {
                    close(descriptor)
                    throw error
                }
            } abandoned: { opened in
                // Opened after the download gave up waiting: left as it is, unlocked.
                close(opened.0)
            }
            let file = PartialFile(destination: path, temporary: partial, stateFile: stateFile, descriptor: descriptor, worker: worker, step: step)
            if state != nil { file.described.store(true, ordering: .releasing) }
            return (file, state)
        } catch {
            throw failure(error, "the folder \(folder) cannot be written")
        }
    }

    /// The destination's path, folder and name; refused (``APIError/Kind/file``) when it names no
    /// file or what is there is not a regular file, before anything is sent.
    private static func names(
        _ destination: URL, on worker: OffPoolWork.Worker, until deadline: ContinuousClock.Instant, step: Duration
    ) async throws(APIError) -> (path: String, folder: String, name: String) {
        let path = destination.standardizedFileURL.path
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        guard !name.isEmpty, name != "/" else { throw Refusal(detail: "\(path) names no file").apiError }
        // Checked before anything is sent (on the download's thread: a hung file system holds it,
        // not the cooperative pool's), and again just before the rename.
        let destination: Destination
        do {
            destination = try await run(on: worker, until: deadline, step: step, path: path) { Destination.check(path) }
        } catch let error as APIError {
            throw error
        } catch {
            destination = .refused("a name that cannot be looked at")
        }
        if case .refused(let what) = destination { throw Refusal.notRegular(path, what).apiError }
        return (path, folder, name)
    }

    /// A kept file refused for what it is, in words.
    private struct Refusal: Error {
        let detail: String

        /// What is at `path` is not a regular file, so the download does not replace it.
        static func notRegular(_ path: String, _ what: String) -> Refusal {
            Refusal(detail: "\(path) is \(what), not a regular file: it is not replaced")
        }

        /// The refusal as the download reports it.
        var apiError: APIError { APIError(kind: .file, detail: detail) }
    }

    /// Opens `path` (`flags`, never following a link, never waiting on a FIFO) and checks the
    /// descriptor: a regular file of this user with one link, not writable by others. Another
    /// user's file in a shared folder, a link or a FIFO planted there is refused, not used.
    private static func openOwn(_ path: String, flags: Int32, what: String) throws -> Int32 {
        let descriptor = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw Refusal(detail: "\(path) (\(what)) is a symbolic link: it is not used") }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(), status.st_nlink == 1,
            status.st_mode & 0o022 == 0
        else {
            close(descriptor)
            throw Refusal(detail: "\(path) (\(what)) is not a regular file of this user's alone: it is not used")
        }
        // A regular file never waits; later reads and writes need no flag.
        _ = fcntl(descriptor, F_SETFL, 0)
        return descriptor
    }

    /// How long what a stopped download still does (writing the last piece it received,
    /// keeping or removing its file) may wait for the file system, cancelled or past its deadline.
    static let finishingGrace = Duration.seconds(2)

    /// How many bytes a commit's flush to disk may take one more request time-out for: 64 MiB,
    /// what a slow disk (a few MiB a second) writes in well under the default 30 seconds.
    static let flushedPerStep = 64 << 20

    /// Runs `body` on `worker` (after the work given to it before) and waits for it for `step`,
    /// until `deadline` or until the task's cancellation (unless not `cancellable`), whichever
    /// comes first; with `finishing`, for ``finishingGrace`` from now, cancelled or not (what a
    /// stopped download still does). A file system that hangs keeps the worker's thread; the
    /// caller gets ``APIError/Kind/timeout`` (naming `path`) or ``APIError/Kind/cancelled``, and
    /// `abandoned` gets what `body` returns if it ever does.
    private static func run<T: Sendable>(
        on worker: OffPoolWork.Worker,
        until deadline: ContinuousClock.Instant,
        step: Duration,
        finishing: Bool = false,
        cancellable: Bool = true,
        path: String,
        _ body: @escaping @Sendable () throws -> T,
        abandoned: (@Sendable (T) -> Void)? = nil
    ) async throws -> T {
        let now = ContinuousClock.now
        let stepEnd = now + Swift.min(Swift.max(step, .zero), .seconds(365 * 86_400))
        let bound = finishing ? now + finishingGrace : Swift.min(deadline, stepEnd)
        let outcome = await worker.run(
            until: bound,
            cancellable: cancellable && !finishing,
            abandon: { (result: Result<T, any Error>) in
                if case .success(let value) = result { abandoned?(value) }
            },
            { Result { try body() } }
        )
        switch outcome {
        case .done(let result):
            return try result.get()
        case .timedOut:
            let within = finishing ? "within \(finishingGrace)" : bound == stepEnd ? "within the request's time-out" : "before the download's deadline"
            throw APIError.timedOut("the file system of \(path) did not answer \(within)")
        case .cancelled:
            throw APIError.cancelled("while waiting for the file system of \(path)")
        }
    }

    /// An ``APIError`` from a failed file-system call: a wait given up (timeout, cancellation)
    /// as it is, a refusal in its own words, anything else ``APIError/Kind/file`` with `what` and
    /// the system's reason.
    private static func failure(_ error: any Error, _ what: String) -> APIError {
        if let error = error as? APIError { return error }
        if let refusal = error as? Refusal { return refusal.apiError }
        return APIError(kind: .file, detail: "\(what): \(reason(error))", underlying: error)
    }

    /// The state file's first line: its format.
    private static let stateFormat = "resourceful-partial 1"

    /// The resume state `stateFile` holds for `request`, with `written` 0; `nil` when it is
    /// missing, not this user's own regular file, for another request, or not what a download wrote.
    private static func readState(_ stateFile: String, request: String) -> ResumeState? {
        guard let descriptor = try? openOwn(stateFile, flags: O_RDONLY, what: "the partial download's state") else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < bytes.count {
            // `count < bytes.count`: the buffer is not empty, the range within it.
            let result = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { break }
            count += result
        }
        guard count < bytes.count else { return nil }
        let lines = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0] == stateFormat, lines[1] == request, lines[4].isEmpty,
            let total = Int(lines[2]), total > 0,
            API.isRangeValidator(String(lines[3]))
        else { return nil }
        return ResumeState(validator: String(lines[3]), total: total, written: 0)
    }

    private init(destination: String, temporary: String, stateFile: String?, descriptor: Int32, worker: OffPoolWork.Worker, step: Duration) {
        self.step = step
        self.destination = destination
        self.temporary = temporary
        self.stateFile = stateFile
        self.descriptor = Descriptor(descriptor)
        self.worker = worker
    }

    /// Whether the part is kept when the download stops (``keep()``).
    var keepsPart: Bool { stateFile != nil }

    /// Runs `body` with the open descriptor on the download's thread, as ``run(on:until:step:finishing:cancellable:path:_:abandoned:)``.
    private func withDescriptor<T: Sendable>(
        until deadline: ContinuousClock.Instant, finishing: Bool = false, _ body: @escaping @Sendable (Int32) throws -> T
    ) async throws -> T {
        let descriptor = self.descriptor
        return try await Self.run(on: worker, until: deadline, step: step, finishing: finishing, path: destination) {
            try descriptor.use(body)
        }
    }

    /// Writes what resuming the part needs (`state`, for the request named by `request`), or
    /// removes the state file when `state` is `nil`, before a byte of the body is written: a part
    /// and its state never disagree, whenever the process is killed.
    func saveState(_ state: ResumeState?, request: String, until deadline: ContinuousClock.Instant) async throws(APIError) {
        guard let stateFile else { return }
        described.store(false, ordering: .releasing)
        do {
            try await Self.run(on: worker, until: deadline, step: step, path: destination) {
                guard let state else {
                    if unlink(stateFile) != 0, errno != ENOENT { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    return
                }
                let text = [Self.stateFormat, request, String(state.total), state.validator, ""].joined(separator: "\n")
                let staged = stateFile + "." + String(UInt64.random(in: .min ... .max), radix: 36)
                let descriptor = open(staged, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                let written = writeAll(Array(text.utf8), to: descriptor)
                let synced = fsync(descriptor)
                close(descriptor)
                guard written, synced == 0, rename(staged, stateFile) == 0 else {
                    let failed = errno
                    unlink(staged)
                    throw POSIXError(POSIXErrorCode(rawValue: failed) ?? .EIO)
                }
            }
        } catch {
            throw Self.failure(error, "\(stateFile) could not be written")
        }
        if state != nil { described.store(true, ordering: .releasing) }
    }

    /// The bytes free for this user on the file system the file is on (`fstatvfs`); `nil` when it
    /// cannot be told.
    ///
    /// - Throws: ``APIError/Kind/timeout`` or ``APIError/Kind/cancelled`` when the file system
    ///   does not answer in time.
    func freeBytes(until deadline: ContinuousClock.Instant) async throws(APIError) -> Int? {
        do {
            return try await withDescriptor(until: deadline) { descriptor -> Int? in
                var info = statvfs()
                guard fstatvfs(descriptor, &info) == 0 else { return nil }
                let (free, overflow) = UInt64(info.f_bavail).multipliedReportingOverflow(by: UInt64(info.f_frsize))
                return overflow || free > UInt64(Int.max) ? Int.max : Int(free)
            }
        } catch let error as APIError {
            throw error
        } catch {
            return nil
        }
    }

    /// Writes `buffer` at `offset`; with `finishing`, a stopped download's last piece, waited
    /// for ``finishingGrace`` whatever the deadline and the task's cancellation.
    ///
    /// - Throws: ``APIError/Kind/file`` (a full disk, say); ``APIError/Kind/timeout`` or
    ///   ``APIError/Kind/cancelled`` when the file system does not answer in time.
    func write(_ buffer: ByteBuffer, at offset: Int, until deadline: ContinuousClock.Instant, finishing: Bool = false) async throws(APIError) {
        do {
            try await withDescriptor(until: deadline, finishing: finishing) { descriptor in
                var written = 0
                try buffer.withUnsafeReadableBytes { bytes in
                    while written < bytes.count {
                        // `written < bytes.count`: the pointer and count stay within `bytes`.
                        let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
                        if result < 0, errno == EINTR { continue }
                        guard result > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                        written += result
                    }
                }
            }
        } catch {
            throw Self.failure(error, "\(temporary) could not be written")
        }
    }

    /// Cuts the file to `length` bytes (a download starting again from 0).
    func truncate(to length: Int, until deadline: ContinuousClock.Instant) async throws(APIError) {
        do {
            try await withDescriptor(until: deadline) { descriptor in
                guard ftruncate(descriptor, off_t(length)) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            }
        } catch {
            throw Self.failure(error, "\(temporary) could not be truncated")
        }
    }

    /// Flushes the file to disk, closes it and renames it to the destination, then flushes the
    /// folder, so that the name survives a crash. The temporary file is removed when it fails.
    /// A cancellation does not stop it (a file renamed into place is not reported as not
    /// written); `deadline` does, on a file system that does not answer — the rename may then
    /// still happen when it does. Flushing `bytes` written takes time on a slow disk: the wait is
    /// one request time-out, and one more for each ``flushedPerStep`` bytes.
    func commit(until deadline: ContinuousClock.Instant, bytes: Int) async throws(APIError) {
        let (descriptor, temporary, destination, stateFile) = (self.descriptor, self.temporary, self.destination, self.stateFile)
        let flush = step * (1 + Swift.min(Swift.max(bytes, 0) / Self.flushedPerStep, 1 << 20))
        do {
            try await Self.run(on: worker, until: deadline, step: flush, cancellable: false, path: destination) {
                try descriptor.closing { descriptor in
                    do {
                        // The permissions of the regular file it replaces, or a new file's (0666 less
                        // the umask); never the set-user-ID, set-group-ID or sticky bits, which would
                        // make the server's bytes a program that runs with another's rights.
                        let mode: mode_t
                        switch Destination.check(destination) {
                        case .refused(let what): throw Destination.Refused(what: what)
                        case .regularFile(let existing): mode = existing & 0o777
                        case .absent: mode = PartialFile.newFileMode()
                        }
                        guard fchmod(descriptor, mode) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                        guard rename(temporary, destination) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                        if let stateFile { unlink(stateFile) } else { Self.removeOlderPart(of: destination) }
                        let folder = open((destination as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                        if folder >= 0 {
                            _ = fsync(folder)
                            close(folder)
                        }
                    } catch {
                        // Not renamed: nothing of it stays (a kept part's state neither).
                        unlink(temporary)
                        if let stateFile { unlink(stateFile) }
                        throw error
                    }
                }
            }
        } catch let refused as Destination.Refused {
            throw Refusal.notRegular(destination, refused.what).apiError
        } catch {
            throw Self.failure(error, "\(destination) could not be written")
        }
    }

    /// Removes the part an interrupted resumable download kept beside `destination`, and its
    /// state, once a download that keeps none wrote the destination whole: the part is older than
    /// the file, and would only take space. Only a regular file of this user with one link is
    /// removed, and only when no download holds its lock (one resuming it now keeps it).
    private static func removeOlderPart(of destination: String) {
        let file = URL(fileURLWithPath: destination, isDirectory: false)
        let partial = DownloadOptions.partialFile(for: file).path
        guard let descriptor = try? openOwn(partial, flags: O_RDONLY, what: "the partial download") else { return }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return }
        var status = stat()
        var named = stat()
        guard fstat(descriptor, &status) == 0, lstat(partial, &named) == 0, named.st_dev == status.st_dev, named.st_ino == status.st_ino else { return }
        unlink(DownloadOptions.partialStateFile(for: file).path)
        unlink(partial)
    }

    /// A file neither committed, discarded nor kept (a path that forgot to) is removed all the
    /// same (a resumable part that its state describes is kept), on the download's thread,
    /// without waiting; the thread ends once that is done.
    deinit {
        let (descriptor, temporary, stateFile) = (self.descriptor, self.temporary, self.stateFile)
        let keeping = keepsPart && described.load(ordering: .acquiring)
        worker.submit {
            Self.closeFile(descriptor, removing: keeping ? nil : (temporary, stateFile))
        }
        worker.close()
    }

    /// Closes and removes the temporary file (and a part's state), on the download's thread: waited for
    /// ``finishingGrace`` at most, cancelled or not, and done in the end even on a file system
    /// that answers later.
    func discard() async {
        _ = await finish(keeping: false)
    }

    /// Closes a resumable part, leaving it and its state for the next download to resume, when
    /// the state describes it; removes everything otherwise (a temporary file, a part without a
    /// state), as ``discard()`` does.
    ///
    /// - Returns: Whether the part was kept now (`false` as well when it was closed before, or
    ///   the file system did not answer in time).
    @discardableResult
    func keep() async -> Bool {
        await finish(keeping: keepsPart && described.load(ordering: .acquiring))
    }

    /// Closes the file, keeping it (unless it is empty: a part of no byte resumes nothing) or
    /// removing it; whether it was closed now and kept.
    private func finish(keeping: Bool) async -> Bool {
        let (descriptor, temporary, stateFile) = (self.descriptor, self.temporary, self.stateFile)
        let kept = try? await Self.run(on: worker, until: .now, step: Self.finishingGrace, finishing: true, path: destination) { () -> Bool in
            let keeps = keeping && (try? descriptor.use { descriptor -> Bool in
                var status = stat()
                return fstat(descriptor, &status) == 0 && status.st_size > 0
            }) == true
            return Self.closeFile(descriptor, removing: keeps ? nil : (temporary, stateFile)) && keeps
        }
        return kept ?? false
    }

    /// Removes `files` (the temporary file and a state file) when given, then closes
    /// `descriptor`, once. The names go before the descriptor (and its lock): another download
    /// never opens a part about to disappear. No `fsync` for a kept part: what was written
    /// outlives the process, and after a power loss the part's size (read again from the file)
    /// says what it holds.
    @discardableResult
    private static func closeFile(_ descriptor: Descriptor, removing files: (temporary: String, stateFile: String?)?) -> Bool {
        descriptor.closeOnce {
            if let files {
                unlink(files.temporary)
                if let stateFile = files.stateFile { unlink(stateFile) }
            }
        }
    }

    /// The mode a new file gets: 0666 less the process's umask, read from `/proc` (setting the
    /// umask to read it would race with other threads); 0644 when it cannot be read.
    static func newFileMode() -> mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let mask = mode_t(line.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8)
        else { return 0o644 }
        return 0o666 & ~mask
    }

    /// What is at a download's destination: what the download may replace.
    enum Destination {
        /// Nothing: the download creates the file.
        case absent
        /// A regular file (or a symbolic link to one, which the download replaces), with its mode.
        case regularFile(mode: mode_t)
        /// Anything else: a folder, a device, a FIFO, a socket, a link to one of them, or a
        /// name that cannot be looked at; named in words.
        case refused(String)

        /// A destination refused just before the rename.
        struct Refused: Error {
            let what: String
        }

        /// Looks at `path` with `lstat` (and `stat` through a symbolic link), never opening it:
        /// opening a device or a FIFO can block or act on it (a tape rewinds, a watchdog starts).
        static func check(_ path: String) -> Destination {
            var status = stat()
            guard lstat(path, &status) == 0 else {
                return errno == ENOENT ? .absent : .refused("a name that cannot be looked at (\(String(cString: strerror(errno))))")
            }
            if status.st_mode & S_IFMT == S_IFLNK {
                var target = stat()
                guard stat(path, &target) == 0 else {
                    // A dangling link: the rename replaces the link itself.
                    return errno == ENOENT ? .absent : .refused("a symbolic link that cannot be followed")
                }
                guard target.st_mode & S_IFMT == S_IFREG else { return .refused("a symbolic link to " + kind(target.st_mode)) }
                return .regularFile(mode: ownMode(target))
            }
            guard status.st_mode & S_IFMT == S_IFREG else { return .refused(kind(status.st_mode)) }
            return .regularFile(mode: ownMode(status))
        }

        /// The mode the replacing file keeps: the replaced file's when it is this user's own; a new
        /// file's when another user made it (in a folder both may write to), so that a file made
        /// `0666` by someone else does not make the download readable and writable by them.
        private static func ownMode(_ status: stat) -> mode_t {
            status.st_uid == geteuid() ? status.st_mode : PartialFile.newFileMode()
        }

        private static func kind(_ mode: mode_t) -> String {
            switch mode & S_IFMT {
            case S_IFDIR: "a folder"
            case S_IFCHR: "a character device"
            case S_IFBLK: "a block device"
            case S_IFIFO: "a FIFO"
            case S_IFSOCK: "a socket"
            case S_IFLNK: "a symbolic link"
            default: "a file of an unknown kind"
            }
        }
    }

    /// An error as a download's detail names it: the system's message for an `errno`.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? POSIXError { return String(cString: strerror(error.code.rawValue)) }
        return "\(type(of: error))"
    }
}

/// Writes all of `bytes` to `descriptor` from its current offset; `false` when a write fails.
private func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    bytes.withUnsafeBytes { buffer in
        var done = 0
        while done < buffer.count {
            guard let base = buffer.baseAddress else { return false }
            let result = write(descriptor, base + done, buffer.count - done)
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            done += result
        }
        return true
    }
}

/// A file descriptor used under a lock and closed once (``PartialFile``).
private final class Descriptor: Sendable {
    private let value: Locked<Int32>

    init(_ value: Int32) {
        self.value = Locked(value)
    }

    /// Runs `body` with the descriptor, or throws `EBADF` when it was closed.
    func use<T>(_ body: (Int32) throws -> T) throws -> T {
        try value.withLock { descriptor in
            guard descriptor >= 0 else { throw POSIXError(.EBADF) }
            return try body(descriptor)
        }
    }

    /// Runs `body` with the descriptor and closes it, whether `body` throws or not.
    func closing(_ body: (Int32) throws -> Void) throws {
        try value.withLock { descriptor in
            guard descriptor >= 0 else { throw POSIXError(.EBADF) }
            defer {
                close(descriptor)
                descriptor = -1
            }
            try body(descriptor)
        }
    }

    /// Runs `before` and closes the descriptor, unless it was closed already; whether it did.
    func closeOnce(_ before: () -> Void) -> Bool {
        value.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            before()
            close(descriptor)
            descriptor = -1
            return true
        }
    }
}
