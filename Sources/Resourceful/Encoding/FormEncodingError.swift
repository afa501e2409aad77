/// Why parameters could not be written as a query string or form body.
enum FormEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The parameters are a single value or a list, not an object with named fields.
    case topLevelNotKeyed
    /// A floating-point value was infinite or NaN.
    case nonFiniteNumber(field: String)
    /// A ``MultipartFile`` was found outside a multipart body.
    case fileOutsideMultipart(field: String)
    /// An array holds objects or arrays, which the array format cannot write.
    case nestedArrayUnsupported(field: String, format: ArrayFormat)

    var description: String {
        switch self {
        case .topLevelNotKeyed:
            "parameters must encode as an object with named fields"
        case .nonFiniteNumber(let field):
            "field '\(field)' is not a finite number"
        case .fileOutsideMultipart(let field):
            "field '\(field)' is a file, which needs a multipart body"
        case .nestedArrayUnsupported(let field, let format):
            "field '\(field)' is an array of objects or arrays, which the \(format.rawValue) array format cannot write"
        }
    }
}
