/// An error whose description names what failed and where, and never holds a credential or a
/// value read from a secret source: an ``APIError`` carries that description as its
/// ``APIError/detail``. A storage's error that does not conform is not known to be safe to show,
/// so only its type reaches the call's error.
///
/// Conform your storage's errors when their descriptions are written to keep that promise:
///
/// ```swift
/// struct VaultError: SecretFreeDescription {
///     var path: String
///     var description: String { "vault has no secret at \(path)" }
/// }
/// ```
public protocol SecretFreeDescription: Error, CustomStringConvertible {}

/// How a log line may name `error`: its description when it is known to hold no secret (a
/// ``SecretFreeDescription``, or an ``APIError``, which only this package makes), else its type
/// alone.
package func secretFreeText(of error: any Error) -> String {
    if let error = error as? any SecretFreeDescription { return error.description }
    if let error = error as? APIError { return error.description }
    return "\(type(of: error))"
}
