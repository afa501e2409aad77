public import Resourceful

/// The former name of ``StubTransport``.
@available(*, deprecated, renamed: "StubTransport")
public typealias StubHTTPClient = StubTransport

/// The former name of ``RecordingTransport``.
@available(*, deprecated, renamed: "RecordingTransport")
public typealias RecordingHTTPClient = RecordingTransport

/// The former name of ``ReplayingTransport``.
@available(*, deprecated, renamed: "ReplayingTransport")
public typealias ReplayingHTTPClient = ReplayingTransport

/// The former name of ``HTTPTransportConformance``.
@available(*, deprecated, renamed: "HTTPTransportConformance")
public typealias HTTPClientConformance<Transport: HTTPTransport> = HTTPTransportConformance<Transport>
