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

/// A coding path kept as a chain of parents, so that going one level deeper costs nothing until
/// a path is asked for (an error, or `codingPath`).
final class DecodingPathNode {
    let parent: DecodingPathNode?
    let step: DecodingPathStep

    init(parent: DecodingPathNode?, step: DecodingPathStep) {
        self.parent = parent
        self.step = step
    }
}

/// The path of a value: its parent's node and its own last step, if any.
struct DecodingPath {
    var parent: DecodingPathNode?
    var last: DecodingPathStep?

    static var root: DecodingPath { DecodingPath(parent: nil, last: nil) }

    /// The path as a node that children can point at.
    var node: DecodingPathNode? {
        guard let last else { return parent }
        return DecodingPathNode(parent: parent, step: last)
    }

    func appending(_ step: DecodingPathStep) -> DecodingPath {
        DecodingPath(parent: node, last: step)
    }

    var codingPath: [any CodingKey] {
        var steps: [any CodingKey] = []
        if let last { steps.append(last.codingKey) }
        var current = parent
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
