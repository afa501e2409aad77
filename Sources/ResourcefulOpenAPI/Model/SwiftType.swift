/// A Swift type as generated code writes it.
indirect enum SwiftType: Hashable, Sendable {
    /// A type by name: one of the generated ones, or a standard or Resourceful one.
    case named(String)
    case array(SwiftType)
    case dictionary(SwiftType)
    case optional(SwiftType)

    static let string = SwiftType.named("String")
    static let json = SwiftType.named(JSONValueRenderer.typeName)

    /// The type as written in a declaration.
    var code: String {
        switch self {
        case .named(let name): name
        case .array(let element): "[\(element.code)]"
        case .dictionary(let value): "[String: \(value.code)]"
        case .optional(let wrapped):
            if case .optional = wrapped { wrapped.code } else { "\(wrapped.code)?" }
        }
    }

    /// The type without an outer `Optional`.
    var unwrapped: SwiftType {
        if case .optional(let wrapped) = self { wrapped.unwrapped } else { self }
    }

    var isOptional: Bool {
        if case .optional = self { true } else { false }
    }

    /// The type made optional (once).
    var optional: SwiftType {
        isOptional ? self : .optional(self)
    }

    /// The named type a value of this type stores inline (not behind an array or dictionary).
    var storedInline: String? {
        switch self {
        case .named(let name): name
        case .optional(let wrapped): wrapped.storedInline
        case .array, .dictionary: nil
        }
    }
}
