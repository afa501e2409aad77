import HTTPTypes

/// The last step before the transport, which no middleware list leaves out: a redirect goes where
/// its `Location` said, and a request bound elsewhere than its call's origin leaves without any
/// header field the redaction rules call a secret, whatever the steps after ``RedirectMiddleware``
/// changed or added (a query item with a key, another path, a signature).
///
/// ``RedirectMiddleware`` decides which redirects are followed and what they carry; this step
/// holds the steps after it to that decision.
struct CrossOriginGuard {
    /// Makes `request` what may leave, for a call whose context is `context`.
    static func apply(to request: inout TransportRequest, context: CallContext) {
        if let hop = context.redirect {
            request.target = hop.target
        }
        if context.redirect?.leftOrigin == true || !request.target.sameOrigin(as: context.target) {
            // Bound elsewhere than the call's origin, or back from there: no credential goes with it.
            let secrets = context.options.crossOriginSecrets
            request.headerFields = request.headerFields.filter { !secrets.contains($0.name.canonicalName) }
        }
    }
}
