/// An error of this package whose description names what failed and where, and never holds a
/// credential or a value read from a secret source: an ``APIError`` may carry it as its detail.
/// A user's own storage error is not known to be one, so only its type reaches the call's error.
package protocol SecretFreeDescription: Error, CustomStringConvertible {}
