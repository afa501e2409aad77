// OpenCombine predates Sendable annotations.
@preconcurrency public import OpenCombineShim
public import Resourceful

extension API {
    /// A cold, single-value publisher for `request`: each subscription makes one call when it first
    /// asks for a value, then sends the value and finishes, or fails with ``APIError``. Cancelling
    /// the subscription cancels the call.
    ///
    /// On Apple platforms this is Combine; elsewhere OpenCombine, with the same API.
    public func publisher<Request: ResourceRequest>(for request: Request) -> AnyPublisher<Request.ResourceType, APIError> {
        APICallPublisher(api: self, request: request).eraseToAnyPublisher()
    }
}
