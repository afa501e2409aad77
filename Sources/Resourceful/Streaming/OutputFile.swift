package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a file was not written (``OutputFile``): names the path and what is there, never a byte
/// of what would have been written.
package struct OutputFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file, as given.
    package let path: String
    /// What is wrong, such as `is a FIFO, not a regular file: it is not replaced`.
    package let reason: String

    /// The path and the reason.
    package var description: String { "\(path) \(reason)" }
}

/// A file written for a person (a recording, generated code) as a download is (``PartialFile``):
/// only a regular file (or a link to one) or nothing is replaced, never a device, a FIFO, a
/// socket or a folder; the bytes go to a temporary file beside it (`O_EXCL`, mode 0600), which
/// is flushed and renamed into place, so that a failure leaves the old file whole and no
/// temporary one; the new file gets the permissions of the file it replaces (or 0666 less the
/// umask), never its set-user-ID, set-group-ID or sticky bits.
package enum OutputFile {
    /// Refuses `path` unless it is absent or a regular file, without opening it (opening a FIFO
    /// waits, opening a device can act on it).
    ///
    /// - Throws: ``OutputFileError`` naming what is there.
    package static func check(_ path: String) throws(OutputFileError) {
        if case .refused(let what) = PartialFile.Destination.check(path) {
            throw OutputFileError(path: path, reason: "is \(what), not a regular file: it is not replaced")
        }
    }

    /// Replaces (or creates) `path` with `bytes` in one step.
    ///
    /// - Throws: ``OutputFileError``; the file at `path` is then as it was.
    package static func write(_ bytes: Data, to path: String) throws(OutputFileError) {
        let descriptor = try replace(path, with: bytes)
        close(descriptor)
    }

    /// Replaces (or creates) `path` with `bytes` in one step and returns a descriptor open for
    /// reading and writing on the file now at `path` (a recording appends through it, never
    /// opening the name again). The caller closes it.
    ///
    /// - Throws: ``OutputFileError``; the file at `path` is then as it was.
    package static func replace(_ path: String, with bytes: Data) throws(OutputFileError) -> Int32 {
        let destination = URL(fileURLWithPath: path, isDirectory: false).standardizedFileURL.path
        let folder = (destination as NSString).deletingLastPathComponent
        let name = (destination as NSString).lastPathComponent
        guard !name.isEmpty, name != "/" else { throw OutputFileError(path: path, reason: "names no file") }
        try check(destination)
        let temporary = folder + "/." + name + "." + String(UInt64.random(in: .min ... .max), radix: 36) + ".tmp"
        let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw OutputFileError(path: path, reason: "cannot be written: the folder \(folder): \(String(cString: strerror(errno)))")
        }
        var renamed = false
        do throws(OutputFileError) {
            try writeAll(bytes, to: descriptor, path: path)
            // Looked at again just before the rename: what is there now decides.
            let mode: mode_t
            switch PartialFile.Destination.check(destination) {
            case .refused(let what): throw OutputFileError(path: path, reason: "is \(what), not a regular file: it is not replaced")
            case .regularFile(let existing): mode = existing & 0o777
            case .absent: mode = PartialFile.newFileMode()
            }
            guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else { throw failure(path) }
            guard rename(temporary, destination) == 0 else { throw failure(path) }
            renamed = true
            let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                _ = fsync(directory)
                close(directory)
            }
            return descriptor
        } catch {
            close(descriptor)
            if !renamed { unlink(temporary) }
            throw error
        }
    }

    /// Replaces (or creates) every file of `files` (path and bytes), all or none: every
    /// destination is checked before a byte is written, and each file is written to a temporary
    /// file beside it; only when all are written and every destination is still absent or a
    /// regular file are they renamed into place. A refused destination (a FIFO, a device…) or a
    /// failed write leaves every file as it was and no temporary file.
    ///
    /// - Throws: ``OutputFileError`` naming the first file refused or not written.
    package static func write(_ files: [(path: String, bytes: Data)]) throws(OutputFileError) {
        let destinations = try files.map { file throws(OutputFileError) in
            let destination = URL(fileURLWithPath: file.path, isDirectory: false).standardizedFileURL.path
            let name = (destination as NSString).lastPathComponent
            guard !name.isEmpty, name != "/" else { throw OutputFileError(path: file.path, reason: "names no file") }
            try check(destination)
            return destination
        }
        var staged: [(temporary: String, descriptor: Int32)] = []
        defer {
            for file in staged {
                close(file.descriptor)
                unlink(file.temporary)
            }
        }
        for (file, destination) in zip(files, destinations) {
            let folder = (destination as NSString).deletingLastPathComponent
            let temporary = folder + "/." + (destination as NSString).lastPathComponent + "." + String(UInt64.random(in: .min ... .max), radix: 36) + ".tmp"
            let descriptor = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else {
                throw OutputFileError(path: file.path, reason: "cannot be written: the folder \(folder): \(String(cString: strerror(errno)))")
            }
            staged.append((temporary, descriptor))
            try writeAll(file.bytes, to: descriptor, path: file.path)
        }
        // Every destination looked at again, and each file's mode set and flushed, before the
        // first rename: what is there now decides, for all of them.
        for ((file, destination), stage) in zip(zip(files, destinations), staged) {
            let mode: mode_t
            switch PartialFile.Destination.check(destination) {
            case .refused(let what): throw OutputFileError(path: file.path, reason: "is \(what), not a regular file: it is not replaced")
            case .regularFile(let existing): mode = existing & 0o777
            case .absent: mode = PartialFile.newFileMode()
            }
            guard fchmod(stage.descriptor, mode) == 0, fsync(stage.descriptor) == 0 else { throw failure(file.path) }
        }
        var renamed = Set<String>()
        for ((file, destination), stage) in zip(zip(files, destinations), staged) {
            guard rename(stage.temporary, destination) == 0 else { throw failure(file.path) }
            renamed.insert(stage.temporary)
        }
        staged.removeAll { file in
            guard renamed.contains(file.temporary) else { return false }
            close(file.descriptor)
            return true
        }
        for folder in Set(destinations.map { ($0 as NSString).deletingLastPathComponent }) {
            let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if directory >= 0 {
                _ = fsync(directory)
                close(directory)
            }
        }
    }

    private static func writeAll(_ bytes: Data, to descriptor: Int32, path: String) throws(OutputFileError) {
        let failed: Int32? = bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                // `written < buffer.count`: the buffer is not empty, its base address not nil.
                guard let base = buffer.baseAddress else { return EIO }
                let result = pwrite(descriptor, base + written, buffer.count - written, off_t(written))
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { return result < 0 ? errno : EIO }
                written += result
            }
            return nil
        }
        if let failed { throw OutputFileError(path: path, reason: "cannot be written: \(String(cString: strerror(failed)))") }
    }

    private static func failure(_ path: String) -> OutputFileError {
        OutputFileError(path: path, reason: "cannot be written: \(String(cString: strerror(errno)))")
    }
}
