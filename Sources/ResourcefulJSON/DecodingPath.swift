/// One step of a coding path: a key or an array index.
enum DecodingPathStep {
    case key(any CodingKey)
    case index(Int)

    var codingKey: any CodingKey {
        switch self {
        case .key(let key): key
        case .index(let index): IndexCodingKey(index)
        }
    }
}

/// A coding path as a chain of parents; `nil` is the root. Nodes are made only for values that
/// are decoded through `init(from:)` and for errors, never for a scalar read that succeeds.
final class DecodingPathNode {
    let parent: DecodingPathNode?
    let step: DecodingPathStep

    init(parent: DecodingPathNode?, step: DecodingPathStep) {
        self.parent = parent
        self.step = step
    }

    /// The node of `key` under `parent`.
    convenience init(parent: DecodingPathNode?, key: some CodingKey) {
        self.init(parent: parent, step: .key(key))
    }

    /// The path ending at `node`, root first.
    static func codingPath(_ node: DecodingPathNode?) -> [any CodingKey] {
        var steps: [any CodingKey] = []
        var current = node
        while let node = current {
            steps.append(node.step.codingKey)
            current = node.parent
        }
        return steps.reversed()
    }
}

/// The coding key of an array element, as Foundation's decoders name it (`Index 3`).
struct IndexCodingKey: CodingKey {
    let intValue: Int?
    let stringValue: String

    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        self.init(intValue)
    }
}

/// A coding key made from a string, such as a dictionary's key or `super`.
struct StringCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// The coding key of a dictionary's entry under the default key strategy, as
/// `Dictionary.init(from:)` makes it: a key that reads as a number has that `intValue`.
struct DictionaryCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = Int(string)
    }

    init?(stringValue: String) { self.init(stringValue) }

    init?(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}
