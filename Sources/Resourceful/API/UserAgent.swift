/// The `User-Agent` sent when neither the configuration's ``APIConfig/baseHeaders`` nor the
/// request's ``ResourceRequest/headers`` name one: some APIs refuse requests without it.
package enum UserAgent {
    /// This package's version, as released: the one place it is written. The `User-Agent` sends
    /// it and `resourceful --version` prints it.
    package static let version = "0.2.0"
    /// `Resourceful/<version>`.
    static let value = "Resourceful/\(version)"
}
