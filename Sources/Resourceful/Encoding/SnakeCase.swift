/// Converts `camelCase` names to `snake_case` the way Foundation's `JSONEncoder` does
/// (`convertToSnakeCase`), so query strings and JSON bodies name fields alike.
enum SnakeCase {
    static func snakeCased(_ key: String) -> String {
        guard !key.isEmpty else { return key }
        var words: [Range<String.Index>] = []
        var wordStart = key.startIndex
        var searchRange = key.index(after: wordStart)..<key.endIndex
        while let upperCaseRange = key.rangeOfUppercase(in: searchRange) {
            let untilUpperCase = wordStart..<upperCaseRange.lowerBound
            words.append(untilUpperCase)
            searchRange = upperCaseRange.lowerBound..<searchRange.upperBound
            guard let lowerCaseRange = key.rangeOfLowercase(in: searchRange) else {
                wordStart = searchRange.lowerBound
                break
            }
            let nextCharacterAfterCapital = key.index(after: upperCaseRange.lowerBound)
            if lowerCaseRange.lowerBound == nextCharacterAfterCapital {
                wordStart = upperCaseRange.lowerBound
            } else {
                let beforeLowerIndex = key.index(before: lowerCaseRange.lowerBound)
                words.append(upperCaseRange.lowerBound..<beforeLowerIndex)
                wordStart = beforeLowerIndex
            }
            searchRange = lowerCaseRange.upperBound..<searchRange.upperBound
        }
        words.append(wordStart..<searchRange.upperBound)
        return words.map { key[$0].lowercased() }.joined(separator: "_")
    }
}

extension String {
    fileprivate func rangeOfUppercase(in range: Range<String.Index>) -> Range<String.Index>? {
        firstRange(in: range) { $0.isUppercase }
    }

    fileprivate func rangeOfLowercase(in range: Range<String.Index>) -> Range<String.Index>? {
        firstRange(in: range) { $0.isLowercase }
    }

    private func firstRange(in range: Range<String.Index>, where predicate: (Character) -> Bool) -> Range<String.Index>? {
        var index = range.lowerBound
        while index < range.upperBound {
            if predicate(self[index]) { return index..<self.index(after: index) }
            index = self.index(after: index)
        }
        return nil
    }
}
