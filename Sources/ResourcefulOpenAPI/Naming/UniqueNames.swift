/// The names taken in one scope, handing out new ones that are unique in it: `name` when it is
/// free, else `name2`, `name3`… the first free.
///
/// Each base name remembers how far its numbering has gone, so a document with thousands of
/// names that map to one Swift name is named in linear time, not by trying every number again
/// for each of them.
struct UniqueNames: Sendable, ExpressibleByArrayLiteral {
    /// The names taken.
    private(set) var names: Set<String>
    /// For a base name, a number `n` such that `base2`…`base(n-1)` are all taken.
    private var nextNumber: [String: Int] = [:]

    init(_ names: some Sequence<String>) {
        self.names = Set(names)
    }

    init(arrayLiteral names: String...) {
        self.init(names)
    }

    func contains(_ name: String) -> Bool {
        names.contains(name)
    }

    mutating func insert(_ name: String) {
        names.insert(name)
    }

    mutating func formUnion(_ other: some Sequence<String>) {
        names.formUnion(other)
    }

    mutating func remove(_ name: String) {
        names.remove(name)
        // A numbered name freed again: the remembered numbering may skip it.
        if name.last?.isNumber == true { nextNumber.removeAll() }
    }

    /// `name` (with its backticks, if any) when its bare form is free, else the bare form with
    /// `2`, `3`… after it, the first that is free and not in `avoiding`; the bare form of the
    /// result is taken.
    mutating func claim(_ name: String, avoiding reserved: Set<String> = []) -> String {
        let bare = SwiftNames.bare(name)
        if !reserved.contains(bare), names.insert(bare).inserted { return name }
        var number = nextNumber[bare, default: 2]
        // Only numbers skipped because they are taken here may be remembered: `reserved` differs
        // from one call to the next.
        var remembers = true
        while true {
            let candidate = bare + String(number)
            number += 1
            if reserved.contains(candidate) {
                remembers = false
            } else if names.insert(candidate).inserted {
                if remembers { nextNumber[bare] = number }
                return candidate
            }
            if remembers { nextNumber[bare] = number }
        }
    }
}
