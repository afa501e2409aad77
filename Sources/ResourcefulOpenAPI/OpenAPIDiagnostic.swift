/// Something in the document that the generated code does not express, and what was generated
/// instead.
///
/// Generation goes on past every diagnostic: the rest of the document is still generated.
public struct OpenAPIDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// Where in the document, as a JSON pointer: `#/components/schemas/Pet/not`.
    public var pointer: String
    /// What could not be expressed, and what the generated code does instead.
    public var message: String

    init(pointer: String, message: String) {
        self.pointer = pointer
        self.message = message
    }

    /// `pointer: message`.
    public var description: String { "\(pointer): \(message)" }
}
