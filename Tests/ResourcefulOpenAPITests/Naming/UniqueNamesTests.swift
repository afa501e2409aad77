import Testing

@testable import ResourcefulOpenAPI

/// Unique names: the first free of `name`, `name2`, `name3`…, the same as trying each number in
/// turn, with names taken in between, numbered names in the document and reserved names.
@Suite struct UniqueNamesTests {
    /// The rule spelled out: try every number from 2.
    private func naive(_ name: String, _ used: inout Set<String>, avoiding reserved: Set<String> = []) -> String {
        let bare = SwiftNames.bare(name)
        var candidate = bare
        var number = 2
        while reserved.contains(candidate) || used.contains(candidate) {
            candidate = bare + String(number)
            number += 1
        }
        used.insert(candidate)
        return candidate == bare ? name : candidate
    }

    @Test func namesAreTheFirstFreeNumber() {
        var names: UniqueNames = ["unknown", "x3"]
        var used: Set<String> = ["unknown", "x3"]
        let reserved: Set<String> = ["x5", "path"]
        let requests = ["x", "x", "x2", "x", "`self`", "`self`", "x", "x", "path", "x", "x22", "x2", "x"]
        for (index, name) in requests.enumerated() {
            let avoiding = index.isMultiple(of: 3) ? reserved : []
            #expect(names.claim(name, avoiding: avoiding) == naive(name, &used, avoiding: avoiding), "\(index): \(name)")
        }
        names.insert("x40")
        used.insert("x40")
        names.remove("x2")
        used.remove("x2")
        for name in ["x", "x", "x"] {
            #expect(names.claim(name) == naive(name, &used))
        }
    }

    @Test func aKeywordKeepsItsBackticksOnlyWhenFree() {
        var names: UniqueNames = []
        #expect(names.claim("`self`") == "`self`")
        #expect(names.claim("`self`") == "self2")
    }
}
