public import Foundation
public import Logging
import Synchronization

/// What a middleware knows about the call it is part of.
///
/// Its fields describe the call and are set by the ``API`` (and the retry step's ``attempt``); a
/// middleware reads them, and may change ``options`` and ``logger`` for the steps after it: the
/// ``API`` writes a changed time-out, byte cap or redaction switch into the request the next
/// step and the transport get (``RequestOptions``). A
/// value type whose fields live in one shared, immutable box: passing a context through the
/// middlewares costs one reference count, not one per field, and changing a field gives this
/// copy a box of its own.
public struct CallContext: Sendable {
    private struct Fields: Sendable {
        var requestID: String
        var verb: ResourceVerb
        var target: RequestTarget
        var pathTemplate: String
        var options: RequestOptions
        var logger: Logger
        var attempt: Int
        var redirect: RedirectHop?
        var credentialExpiresAt: Date?
        var start: ContinuousClock.Instant
        var applied: RequestOptions.TransportSettings
    }

    /// What ``RedirectMiddleware`` tells the steps after it about the hop it sends.
    package struct RedirectHop: Sendable {
        /// The target it built from the `Location`: the request must go there unchanged.
        var target: RequestTarget
        /// Whether the call has been to another origin than its own: no secret is sent again.
        var leftOrigin: Bool
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    private var fields: Fields {
        get { box.fields }
        set { box = Box(newValue) }
    }

    /// An identifier for this call, also in its log lines as `resourceful.request-id`.
    public package(set) var requestID: String {
        get { box.fields.requestID }
        set { fields.requestID = newValue }
    }
    /// The request's verb.
    public package(set) var verb: ResourceVerb {
        get { box.fields.verb }
        set { fields.verb = newValue }
    }
    /// Where the call goes, as built (the page asked for, for a pagination link); a request on
    /// its way may be sent elsewhere (a redirect): its own ``TransportRequest/target`` says where.
    public package(set) var target: RequestTarget {
        get { box.fields.target }
        set { fields.target = newValue }
    }
    /// The path with its interpolated values replaced by `{}`, a label of bounded cardinality.
    public package(set) var pathTemplate: String {
        get { box.fields.pathTemplate }
        set { fields.pathTemplate = newValue }
    }
    /// How the call is made: time-out, retries, redaction, coders… (``RequestOptions``).
    public var options: RequestOptions {
        get { box.fields.options }
        set { fields.options = newValue }
    }
    /// The logger of the call.
    public var logger: Logger {
        get { box.fields.logger }
        set { fields.logger = newValue }
    }
    /// Which attempt this is, from 1; set by the retry step.
    public package(set) var attempt: Int {
        get { box.fields.attempt }
        set { fields.attempt = newValue }
    }

    /// When the credential the call was built with stops being valid, when its storage says
    /// (``AuthenticationStorage/credential(for:)``): ``CredentialRefreshMiddleware`` renews one
    /// that has expired before sending instead of waiting for a `401`.
    public package(set) var credentialExpiresAt: Date? {
        get { box.fields.credentialExpiresAt }
        set { fields.credentialExpiresAt = newValue }
    }

    /// The redirect hop this request is, when ``RedirectMiddleware`` sends one.
    package var redirect: RedirectHop? {
        get { box.fields.redirect }
        set { fields.redirect = newValue }
    }

    /// When the call started: the time-outs of ``options`` count from here.
    package var start: ContinuousClock.Instant { box.fields.start }

    /// Whether a step changed the time-out, byte cap or a redaction switch of ``options`` since
    /// they were last written into a request of this call (``applyOptions(to:)``).
    package var hasUnappliedOptions: Bool {
        box.fields.options.transportSettings != box.fields.applied
    }

    /// Brings the deadline, idle time-out, byte cap and redaction switches of `request` in line
    /// with ``options``, when a step changed them since they were last written into a request of
    /// this call: run by the ``API`` before each middleware and before the transport, so that a
    /// change reaches every step after the one that made it.
    package mutating func applyOptions(to request: inout TransportRequest) {
        let settings = box.fields.options.transportSettings
        let applied = box.fields.applied
        guard settings != applied else { return }
        request.apply(settings, since: applied, start: box.fields.start)
        fields.applied = settings
    }

    /// Creates a context for a call started at `start`, whose request was built with `options`.
    package init(
        requestID: String,
        verb: ResourceVerb,
        target: RequestTarget,
        pathTemplate: String,
        options: RequestOptions,
        logger: Logger,
        attempt: Int = 1,
        credentialExpiresAt: Date? = nil,
        start: ContinuousClock.Instant = .now
    ) {
        box = Box(
            Fields(
                requestID: requestID,
                verb: verb,
                target: target,
                pathTemplate: pathTemplate,
                options: options,
                logger: logger,
                attempt: attempt,
                redirect: nil,
                credentialExpiresAt: credentialExpiresAt,
                start: start,
                applied: options.transportSettings
            )
        )
    }
}

extension API {
    /// 16 lowercase hex digits: one allocation, no system call.
    ///
    /// A per-process counter, offset by a random seed drawn once, through SplitMix64's finalizer.
    /// The finalizer is a bijection on `UInt64`, so two calls of one process never share an ID, and
    /// the seed makes IDs of different processes unlikely to meet. (`UInt64.random` would ask the
    /// kernel for randomness on every call.)
    static func makeRequestID() -> String {
        var value = RequestIDSource.seed &+ RequestIDSource.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for index in 0..<16 {
                buffer[index] = digits.utf8Start[Int((value >> (60 - 4 * UInt64(index))) & 0xF)]
            }
            return 16
        }
    }
}

/// The state behind ``API/makeRequestID()``.
private enum RequestIDSource {
    static let seed = UInt64.random(in: .min ... .max)
    static let counter = Atomic<UInt64>(0)
}
