/// Why a scalar could not be read, before anyone asks where: the container that asked turns it
/// into a `DecodingError` with the value's type and path, so a read that succeeds builds neither.
enum ValueFailure: Error {
    /// The value at this tape index is of another JSON type.
    case mismatch(found: Int)
    /// The value is `null`.
    case null
    /// The value is malformed, or out of the type's range.
    case corrupt(JSONSyntaxError)
}
