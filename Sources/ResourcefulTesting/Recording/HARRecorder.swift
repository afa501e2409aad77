import Foundation
import Resourceful

/// Keeps a HAR archive and writes it whole after each entry, so that an interrupted run loses
/// nothing it recorded.
final class HARRecorder: Sendable {
    let file: URL
    private let archive: Locked<HARArchive>

    /// Starts from what `file` holds when `appending` and it exists, else from nothing; a new
    /// archive is written at once, so that a `record` run leaves no older recordings behind.
    init(file: URL, appending: Bool) throws(CassetteError) {
        self.file = file
        if appending, FileManager.default.fileExists(atPath: file.path) {
            archive = Locked(try HARArchive.read(file))
        } else {
            let empty = HARArchive(log: HARArchive.Log())
            try empty.write(to: file)
            archive = Locked(empty)
        }
    }

    func append(_ entry: HARArchive.Entry) throws(CassetteError) {
        let result: Result<Void, CassetteError> = archive.withLock { archive in
            archive.log.entries.append(entry)
            do throws(CassetteError) {
                try archive.write(to: file)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }
}
