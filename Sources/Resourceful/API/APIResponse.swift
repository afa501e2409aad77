public import HTTPTypes

/// A decoded value with the status and header fields it came with.
public struct APIResponse<Value: Sendable>: Sendable {
    /// The decoded body.
    public var value: Value
    /// The status, in 200–299.
    public var status: HTTPResponse.Status
    /// The response's header fields.
    public var headerFields: HTTPFields

    /// Creates a response.
    public init(value: Value, status: HTTPResponse.Status, headerFields: HTTPFields) {
        self.value = value
        self.status = status
        self.headerFields = headerFields
    }
}
