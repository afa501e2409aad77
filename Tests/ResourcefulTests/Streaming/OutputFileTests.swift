import Foundation
@testable import Resourceful
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// ``OutputFile``: what the CLI's recordings and generated files are written through.
@Suite struct OutputFileTests {
    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "resourceful-outputfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        return status.st_mode
    }

    @Test func aLinkToADeviceAFolderAndAFIFOAreNotReplaced() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let device = folder.appending(path: "null").path
        try FileManager.default.createSymbolicLink(atPath: device, withDestinationPath: "/dev/null")
        let fifo = folder.appending(path: "fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let subfolder = folder.appending(path: "sub").path
        try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: false)
        for (path, what) in [(device, "a symbolic link to a character device"), (fifo, "a FIFO"), (subfolder, "a folder")] {
            #expect(throws: OutputFileError(path: path, reason: "is \(what), not a regular file: it is not replaced")) {
                try OutputFile.write(Data("x".utf8), to: path)
            }
        }
        #expect(mode("/dev/null") & S_IFMT == S_IFCHR)
        #expect(mode(device) & S_IFMT == S_IFLNK)
        #expect(mode(fifo) & S_IFMT == S_IFIFO)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["fifo", "null", "sub"])
    }

    @Test func aRegularFileKeepsItsPermissionsLessTheSetIDAndStickyBits() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appending(path: "tool").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o7750) == 0)
        try OutputFile.write(Data("new".utf8), to: path)
        #expect(mode(path) & 0o7777 == 0o750)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
        let created = folder.appending(path: "new.txt").path
        try OutputFile.write(Data("fresh".utf8), to: created)
        #expect(mode(created) & 0o7777 == PartialFile.newFileMode())
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["new.txt", "tool"])
    }

    @Test func aFolderThatCannotBeWrittenLeavesTheFileAsItWas() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appending(path: "absent/file.txt").path
        let error = #expect(throws: OutputFileError.self) { try OutputFile.write(Data("x".utf8), to: missing) }
        #expect(error?.description.contains("cannot be written") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }
}
