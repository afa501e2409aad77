/// The `JSONValue` type generated beside the schemas when one of them is free-form (`{}`, an
/// object without properties, `not`): any JSON value, decoded and encoded as is.
enum JSONValueRenderer {
    static let typeName = "JSONValue"

    static func render(into writer: inout CodeWriter, access: String) {
        writer.documentation(Documentation(["Any JSON value: what a schema that allows any value decodes to."]))
        writer.block("\(access)enum JSONValue: Codable, Hashable, Sendable") { writer in
            writer.line("case null")
            writer.line("case bool(Bool)")
            writer.line("case number(Double)")
            writer.line("case string(String)")
            writer.line("case array([JSONValue])")
            writer.line("case object([String: JSONValue])")
            writer.line()
            writer.documentation(Documentation(["Decodes whichever JSON value `decoder` holds."]))
            writer.block("\(access)init(from decoder: any Decoder) throws") { writer in
                writer.line("let container = try decoder.singleValueContainer()")
                for line in [
                    "if container.decodeNil() {",
                    "    self = .null",
                    "} else if let value = try? container.decode(Bool.self) {",
                    "    self = .bool(value)",
                    "} else if let value = try? container.decode(Double.self) {",
                    "    self = .number(value)",
                    "} else if let value = try? container.decode(String.self) {",
                    "    self = .string(value)",
                    "} else if let value = try? container.decode([JSONValue].self) {",
                    "    self = .array(value)",
                    "} else {",
                    "    self = .object(try container.decode([String: JSONValue].self))",
                    "}",
                ] {
                    writer.line(line)
                }
            }
            writer.line()
            writer.documentation(Documentation(["Encodes the value as it was decoded."]))
            writer.block("\(access)func encode(to encoder: any Encoder) throws") { writer in
                writer.line("var container = encoder.singleValueContainer()")
                writer.switchBlock("self") { writer in
                    writer.line("case .null: try container.encodeNil()")
                    writer.line("case .bool(let value): try container.encode(value)")
                    writer.line("case .number(let value): try container.encode(value)")
                    writer.line("case .string(let value): try container.encode(value)")
                    writer.line("case .array(let value): try container.encode(value)")
                    writer.line("case .object(let value): try container.encode(value)")
                }
            }
        }
    }
}
