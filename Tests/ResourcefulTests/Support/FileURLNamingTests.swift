import Foundation
import Testing

/// A file URL made from a path without saying whether it names a folder
/// (`URL(fileURLWithPath:)`, `URL(filePath:)`) makes Foundation look at the path (`stat`) to
/// decide: on a file system that does not answer (a hung network mount), that look waits as long
/// as the file system does, before the code that bounds its waits runs at all. The package's code
/// always says what the path names.
@Suite struct FileURLNamingTests {
    /// The package's folder.
    static let root = URL(fileURLWithPath: #filePath, isDirectory: false).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The lines of code (not comments) under `Sources/` that make a file URL from a path without
    /// saying whether it is a folder, as `file:line`.
    static func unspecifiedFileURLs() throws -> [String] {
        let sources = root.appendingPathComponent("Sources", isDirectory: true)
        guard let walker = FileManager.default.enumerator(atPath: sources.path) else { return ["Sources cannot be listed"] }
        var found: [String] = []
        // `URL(fileURLWithPath: x)` and `URL(filePath: x)`, up to the closing parenthesis of a
        // call whose argument holds no call of its own.
        let pattern = try Regex(#"URL\((fileURLWithPath|filePath):[^()]*(\([^()]*\)[^()]*)*\)"#)
        while let name = walker.nextObject() as? String {
            guard name.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: sources.path + "/" + name, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                for match in code.matches(of: pattern) {
                    let call = code[match.range]
                    if !call.contains("isDirectory:"), !call.contains("directoryHint:") {
                        found.append("\(name):\(number + 1)")
                    }
                }
            }
        }
        return found.sorted()
    }

    @Test func everyFileURLFromAPathSaysWhetherItIsAFolder() throws {
        #expect(try Self.unspecifiedFileURLs() == [])
    }

    @Test func theCheckFindsWhatItLooksFor() throws {
        let pattern = try Regex(#"URL\((fileURLWithPath|filePath):[^()]*(\([^()]*\)[^()]*)*\)"#)
        let unspecified = #"let u = URL(fileURLWithPath: record)"#
        let specified = #"let u = URL(fileURLWithPath: name(of: x), isDirectory: false)"#
        #expect(unspecified.firstMatch(of: pattern).map { !String(unspecified[$0.range]).contains("isDirectory:") } == true)
        #expect(specified.firstMatch(of: pattern).map { String(specified[$0.range]).contains("isDirectory:") } == true)
    }
}
