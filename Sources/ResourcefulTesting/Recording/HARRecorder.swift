import Foundation
import Resourceful

/// Keeps a HAR file valid after each entry, writing only that entry: the file's last bytes (the
/// end of the `entries` array and of the document) are overwritten by the new entry followed by
/// the same closing bytes. A long recording costs the size of each entry, not of the file so far,
/// and an interrupted run keeps every entry written before.
final class HARRecorder: Sendable {
    let file: URL
    /// The bytes after the last entry.
    private static let closing = Data("\n    ]\n  }\n}\n".utf8)

    private struct State {
        var handle: FileHandle
        var entries: Int
    }

    private let state: Locked<State>

    /// Starts from what `file` holds when `appending` and it exists, else from nothing; the file
    /// is written at once, so that a `record` run leaves no older recordings behind.
    ///
    /// The file is replaced as a download's is (``OutputFile``): only a regular file (or nothing)
    /// is, through a temporary file renamed into place, never keeping set-ID bits; entries are
    /// then appended through the descriptor it was written with, never by opening the name again.
    init(file: URL, appending: Bool) throws(CassetteError) {
        self.file = file
        // Before anything is read: reading a FIFO would wait for ever, a device never end.
        do {
            try OutputFile.check(file.path)
        } catch {
            throw CassetteError(.unwritableFile, detail: error.description)
        }
        var existing: [HARArchive.Entry] = []
        if appending, FileManager.default.fileExists(atPath: file.path) {
            existing = try HARArchive.read(file).log.entries
        }
        let document: Data
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            var opening = try Self.opening()
            for (index, entry) in existing.enumerated() {
                opening.append(try Self.encoded(entry, first: index == 0))
            }
            opening.append(Self.closing)
            document = opening
        } catch {
            throw CassetteError(.unwritableFile, detail: "\(file.path) could not be written: \(error.localizedDescription)")
        }
        do {
            let descriptor = try OutputFile.replace(file.path, with: document)
            state = Locked(State(handle: FileHandle(fileDescriptor: descriptor, closeOnDealloc: true), entries: existing.count))
        } catch {
            throw CassetteError(.unwritableFile, detail: error.description)
        }
    }

    deinit {
        state.withLock { try? $0.handle.close() }
    }

    /// Writes `entry` after the others.
    ///
    /// A write that fails part way (a full disk, a quota) is undone: the file is cut back to the
    /// end of the last whole entry and closed again, so that it stays a valid HAR document with
    /// every entry written before.
    func append(_ entry: HARArchive.Entry) throws(CassetteError) {
        let result: Result<Void, CassetteError> = state.withLock { state in
            var lastEntryEnd: UInt64?
            do {
                var bytes = try Self.encoded(entry, first: state.entries == 0)
                bytes.append(Self.closing)
                let end = try state.handle.seekToEnd()
                let entryEnd = end - UInt64(Self.closing.count)
                lastEntryEnd = entryEnd
                try state.handle.seek(toOffset: entryEnd)
                try state.handle.write(contentsOf: bytes)
                state.entries += 1
                return .success(())
            } catch {
                if let lastEntryEnd { Self.restoreClosing(state.handle, at: lastEntryEnd) }
                return .failure(CassetteError(.unwritableFile, detail: "\(file.path) could not be written: \(Self.reason(error))"))
            }
        }
        try result.get()
    }

    /// What the system said went wrong (`File too large`, `No space left on device`), rather than
    /// Foundation's wrapper of it.
    private static func reason(_ error: any Error) -> String {
        if let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return error.localizedDescription
    }

    /// Cuts the file back to `offset`, the end of its last whole entry, and writes the closing
    /// bytes again: they fit in the space the cut frees.
    private static func restoreClosing(_ handle: FileHandle, at offset: UInt64) {
        try? handle.truncate(atOffset: offset)
        try? handle.seek(toOffset: offset)
        try? handle.write(contentsOf: closing)
    }

    /// The document up to the opening of its `entries` array.
    private static func opening() throws -> Data {
        let creator = String(decoding: try encoder.encode(HARArchive.Creator()), as: UTF8.self)
        let indented = creator.replacingOccurrences(of: "\n", with: "\n    ")
        return Data("{\n  \"log\" : {\n    \"creator\" : \(indented),\n    \"version\" : \"1.2\",\n    \"entries\" : [".utf8)
    }

    /// An entry as it stands in the array, after a comma unless it is the first.
    private static func encoded(_ entry: HARArchive.Entry, first: Bool) throws -> Data {
        let text = String(decoding: try encoder.encode(entry), as: UTF8.self)
        return Data(((first ? "\n      " : ",\n      ") + text.replacingOccurrences(of: "\n", with: "\n      ")).utf8)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
