import Foundation
import ResourcefulOpenAPI
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// A document with ten thousand names that all map to one Swift name is generated in time that
/// grows linearly: a hostile document cannot stall a build that runs the generator.
@Suite struct WideDocumentTests {
    static let count = 10_000

    /// The most processor time one document may take here: generous, for the test library
    /// recording a backtrace for every error thrown while decoding. A debug build of the linear
    /// generator takes 0.2 to 2.3 s for each of these documents; the quadratic one took minutes.
    /// Processor time of the generating thread, not time on the clock: other work on a loaded
    /// machine does not count.
    static let bound = Duration.seconds(90)

    /// `x` followed by `index` written in the separators `-`, `_` and `.`: a distinct wire name
    /// that is `x` in Swift.
    static func name(_ index: Int) -> String {
        var digits = ""
        var rest = index
        repeat {
            digits.append(["-", "_", "."][rest % 3])
            rest /= 3
        } while rest > 0
        return "x" + digits
    }

    static func names() -> [String] {
        (0..<count).map(name)
    }

    /// Generates `document` on a thread of its own (minutes of work on a loaded machine must not
    /// hold one of the few threads every other test's tasks run on), checks the thread spent less
    /// than ``bound`` of processor time on it, and returns the generated text.
    private func generate(_ document: String) async throws -> String {
        let (text, spent) = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(String, Duration), any Error>) in
            Thread {
                let start = Self.threadCPUTime()
                do {
                    let generation = try ProjectFiles.generate(document)
                    let text = generation.files.map(\.contents).joined(separator: "\n")
                    continuation.resume(returning: (text, Self.threadCPUTime() - start))
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        #expect(spent < Self.bound, "took \(spent) of processor time")
        return text
    }

    /// The processor time the calling thread has used.
    private static func threadCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    private static func json(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
    }

    private static func document(paths: [String: Any] = [:], schemas: [String: Any]) throws -> String {
        try json([
            "openapi": "3.1.0",
            "info": ["title": "Wide", "version": "1"],
            "paths": paths,
            "components": ["schemas": schemas],
        ])
    }

    @Test func enumValuesNamedAlike() async throws {
        let text = try await generate(try Self.document(schemas: ["Kind": ["type": "string", "enum": Self.names()]]))
        let first = text.contains("    case x\n"), last = text.contains("    case x\(Self.count)\n")
        let past = text.contains("    case x\(Self.count + 1)\n")
        #expect(first && last && !past)
    }

    @Test func propertiesNamedAlike() async throws {
        let properties = Dictionary(uniqueKeysWithValues: Self.names().map { ($0, ["type": "string"]) })
        let text = try await generate(try Self.document(schemas: ["Wide": ["type": "object", "properties": properties]]))
        let first = text.contains("public var x: String?"), last = text.contains("public var x\(Self.count): String?")
        #expect(first && last)
    }

    @Test func schemasNamedAlikeInAChainOfReferences() async throws {
        let names = Self.names()
        var schemas: [String: Any] = [:]
        for (index, name) in names.enumerated() {
            let next = names[(index + 1) % names.count]
            schemas[name] = ["type": "object", "properties": ["next": ["$ref": "#/components/schemas/\(next)"]]]
        }
        let text = try await generate(try Self.document(schemas: schemas))
        // One cycle through every schema: each stores the next inline, so each is a class.
        let classes = text.components(separatedBy: "public final class X").count - 1
        #expect(classes == Self.count)
    }

    @Test func parametersNamedAlike() async throws {
        let names = Self.names()
        let parameters = names.prefix(Self.count / 2).map { ["name": $0, "in": "query", "schema": ["type": "string"]] }
            + names.suffix(Self.count / 2).map { ["name": $0, "in": "header", "schema": ["type": "string"]] }
        let paths = ["/wide": ["get": ["operationId": "wide", "parameters": parameters, "responses": ["204": ["description": "none"]]]]]
        let text = try await generate(try Self.document(paths: paths, schemas: [:]))
        let last = text.contains("x\(Self.count / 2): String? = nil")
        #expect(last)
    }
}
