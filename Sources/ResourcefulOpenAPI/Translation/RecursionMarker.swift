/// Finds the schema types that store themselves inline (`Employee.manager: Employee?`), which a
/// struct cannot: such a struct is declared a `final class`, such a union an `indirect enum`.
/// Through an array or a dictionary a type may hold itself as a struct.
enum RecursionMarker {
    static func mark(_ declarations: inout [Declaration]) {
        var edges: [String: Set<String>] = [:]
        for declaration in declarations {
            edges[declaration.name, default: []].formUnion(inlineNames(declaration))
        }
        let recursive = onCycles(edges)
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

    /// The names that reach themselves: those in a strongly connected component of more than one
    /// name, or with an edge to themselves (Tarjan's algorithm, without recursion, so a long chain
    /// of types neither takes quadratic time nor overflows the stack).
    private static func onCycles(_ edges: [String: Set<String>]) -> Set<String> {
        var order: [String: Int] = [:]
        var low: [String: Int] = [:]
        var stack: [String] = []
        var onStack: Set<String> = []
        var result: Set<String> = []
        var frames: [(name: String, successors: [String], next: Int)] = []
        func visit(_ name: String) {
            order[name] = order.count
            low[name] = order[name]
            stack.append(name)
            onStack.insert(name)
            frames.append((name, Array(edges[name] ?? []), 0))
        }
        for root in edges.keys where order[root] == nil {
            visit(root)
            while let top = frames.last {
                let current = frames.count - 1
                if top.next < top.successors.count {
                    let successor = top.successors[top.next]
                    frames[current].next += 1
                    if order[successor] == nil {
                        visit(successor)
                    } else if onStack.contains(successor) {
                        low[top.name] = min(low[top.name, default: 0], order[successor, default: 0])
                    }
                    continue
                }
                frames.removeLast()
                if let parent = frames.last?.name {
                    low[parent] = min(low[parent, default: 0], low[top.name, default: 0])
                }
                guard low[top.name] == order[top.name] else { continue }
                var component: [String] = []
                while let member = stack.popLast() {
                    onStack.remove(member)
                    component.append(member)
                    if member == top.name { break }
                }
                if component.count > 1 || edges[top.name]?.contains(top.name) == true {
                    result.formUnion(component)
                }
            }
        }
        return result
    }
}
