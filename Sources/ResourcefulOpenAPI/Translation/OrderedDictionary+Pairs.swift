internal import OpenAPIKitCore

extension OrderedDictionary {
    /// The pairs in order, read through the dictionary's iterator.
    ///
    /// OpenAPIKit's `OrderedDictionary` counts itself on every access by position, so `map`,
    /// `keys` and `values` (which read by position) take quadratic time on a wide document; its
    /// iterator does not.
    var pairs: [(key: Key, value: Value)] {
        var pairs: [(key: Key, value: Value)] = []
        for pair in self { pairs.append(pair) }
        return pairs
    }
}
