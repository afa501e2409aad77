/// Finds the schema types that store themselves inline (`Employee.manager: Employee?`), which a
/// struct cannot: such a struct is declared a `final class`, such a union an `indirect enum`.
/// Through an array or a dictionary a type may hold itself as a struct.
enum RecursionMarker {
    static func mark(_ declarations: inout [Declaration]) {
        var edges: [String: Set<String>] = [:]
        for declaration in declarations {
            edges[declaration.name, default: []].formUnion(inlineNames(declaration))
        }
        let recursive = Set(edges.keys.filter { reaches(from: $0, to: $0, edges: edges) })
        guard !recursive.isEmpty else { return }
        declarations = declarations.map { declaration in
            guard recursive.contains(declaration.name) else { return declaration }
            switch declaration {
            case .object(var object):
                object.isRecursive = true
                return .object(object)
            case .union(var union):
                union.isRecursive = true
                return .union(union)
            case .alias(var alias):
                alias.companions = alias.companions.map { companion in
                    guard case .union(var union) = companion else { return companion }
                    union.isRecursive = true
                    return .union(union)
                }
                return .alias(alias)
            case .enumeration:
                return declaration
            }
        }
    }

    /// The named types a declaration stores inline, its nested types' included.
    private static func inlineNames(_ declaration: Declaration) -> Set<String> {
        switch declaration {
        case .object(let object):
            return Set(object.properties.compactMap(\.type.storedInline)).union(object.nested.flatMap(inlineNames))
        case .union(let union):
            return Set(union.alternatives.compactMap(\.type.storedInline)).union(union.nested.flatMap(inlineNames))
        case .alias(let alias):
            return Set([alias.type.storedInline].compactMap { $0 }).union(alias.companions.flatMap(inlineNames))
        case .enumeration:
            return []
        }
    }

    private static func reaches(from start: String, to target: String, edges: [String: Set<String>]) -> Bool {
        var seen: Set<String> = []
        var stack = Array(edges[start] ?? [])
        while let name = stack.popLast() {
            if name == target { return true }
            guard seen.insert(name).inserted else { continue }
            stack.append(contentsOf: edges[name] ?? [])
        }
        return false
    }
}
