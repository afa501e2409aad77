import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// Step 1 of a call: turns a ``ResourceRequest`` into a ``TransportRequest``.
struct RequestBuilder: Sendable {
    /// A built request and what the rest of the call needs to know about it.
    struct Built: Sendable {
        var request: TransportRequest
        /// When the call started: the time-outs of its options count from here.
        var start: ContinuousClock.Instant
        /// When the credential in `request` expires, when its storage says.
        var credentialExpiresAt: Date? = nil
    }


    /// The configured base URL: its origin and path, no query.
    let base: RequestTarget
    /// `Accept`, `User-Agent` and the configured base header fields, checked and merged once with
    /// the rest of the configuration: the fields every request starts from, or why the
    /// configuration is refused.
    private let baseHeaders: Result<HTTPFields, APIError>
    /// The configured base query items, in name order.
    private let baseQuery: [FormField]
    private let formEncoder: FormEncoder

    init(config: APIConfig) {
        let parsed = RequestTarget(parsing: config.baseURL.absoluteString)
        var basePath = parsed.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        base = RequestTarget(origin: parsed.origin, basePath: basePath.isEmpty ? "" : "/" + basePath, path: "")
        baseHeaders = Result { () throws(APIError) in
            if let problem = config.validationError() { throw problem }
            var fields: HTTPFields = [.accept: "application/json", .userAgent: UserAgent.value]
            for (name, value) in config.baseHeaders.sorted(by: { $0.key < $1.key }) { try Self.set(name, value, in: &fields) }
            return fields
        }
        baseQuery = config.baseQueryItems.sorted { $0.key < $1.key }.map { FormField(name: $0.key, value: .text($0.value)) }
        formEncoder = FormEncoder(
            keyStrategy: config.coding.keyStrategy,
            dateStrategy: config.coding.dateStrategy,
            arrayFormat: config.coding.arrayFormat
        )
    }

    /// Builds the request as `options` say; `authorization` is the storage's header value, if any.
    func build<R: ResourceRequest>(
        _ request: R,
        options: RequestOptions,
        authorization: String?,
        start: ContinuousClock.Instant
    ) throws(APIError) -> Built {
        let path = request.path
        guard !path.hasUnusableSegment else {
            throw APIError(kind: .invalidRequest, detail: "an interpolated path segment is empty, '.' or '..'")
        }
        var fields = try baseHeaders.get()
        let headers = request.headers
        if !headers.isEmpty {
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { try Self.set(name, value, in: &fields) }
        }
        let credentialField = options.credentialField
        if let authorization, fields[credentialField] == nil {
            guard HeaderValidation.isValidValue(authorization) else {
                throw APIError(kind: .invalidRequest, detail: "the stored credential holds CR, LF or NUL")
            }
            // Known absent: appended, without the search a subscript assignment makes.
            fields.append(HTTPField(name: credentialField, value: authorization))
        }

        var query: [RequestTarget.QueryItem] = []
        var body: TransportBody?
        let parameters = request.parameters
        let hasParameters = !(parameters is Empty)
        let ownQuery = request.query
        let hasQuery = !(ownQuery is Empty)
        if request.verb.sendsBody {
            if hasParameters {
                body = try encodeBody(
                    parameters,
                    as: options.bodyEncoding,
                    arrayFormat: options.arrayFormat,
                    encoder: options.requestEncoder,
                    fields: &fields
                )
            }
            if hasQuery || !baseQuery.isEmpty {
                query = try queryItems(hasQuery ? try formFields(ownQuery, arrayFormat: options.arrayFormat) : [])
            }
        } else if hasParameters || hasQuery || !baseQuery.isEmpty {
            var items = hasParameters ? try formFields(parameters, arrayFormat: options.arrayFormat) : []
            if hasQuery { items += try formFields(ownQuery, arrayFormat: options.arrayFormat) }
            query = try queryItems(items)
        }

        var target = base
        let encoded = path.encoded
        // Searched as bytes: a `?` is one byte in UTF-8, and its index is the string's.
        if let mark = encoded.utf8.firstIndex(of: UInt8(ascii: "?")) {
            // A path written with a literal query (`ResourcePath(encoded:)`) keeps it, first.
            target.path = String(encoded[..<mark])
            target.query = RequestTarget.QueryItem.parse(encoded[encoded.index(after: mark)...]) + query
        } else {
            target.path = encoded
            target.query = query
        }
        var transport = TransportRequest(
            method: request.verb.method(update: options.updateMethod),
            target: target,
            headerFields: fields,
            body: body,
            deadline: start,
            maxResponseBytes: 0
        )
        // Deadline, byte cap and redaction switches: written where a middleware's change to the
        // options is written too.
        transport.apply(options.transportSettings, since: nil, start: start)
        return Built(request: transport, start: start)
    }

    private func encodeBody(
        _ parameters: some Encodable,
        as encoding: BodyEncoding,
        arrayFormat: ArrayFormat,
        encoder: any RequestEncoder,
        fields: inout HTTPFields
    ) throws(APIError) -> TransportBody {
        if let upload = parameters as? FileUpload {
            if fields[.contentType] == nil { fields[.contentType] = upload.contentType }
            do {
                return try TransportBody(contentsOfFile: upload.fileURL.path)
            } catch {
                throw APIError(kind: .file, detail: error.detail, underlying: error.underlying)
            }
        }
        switch encoding {
        case .json:
            if fields[.contentType] == nil { fields[.contentType] = "application/json" }
            do {
                return TransportBody(ByteBuffer(data: try encoder.encode(parameters)))
            } catch let error as EncodingError {
                var failure = APIError(kind: .encodingFailed, underlying: error)
                if case .invalidValue(_, let context) = error { failure.codingPath = APIError.render(context.codingPath) }
                throw failure
            } catch {
                throw APIError(kind: .encodingFailed, underlying: error)
            }
        case .formURLEncoded:
            fields[.contentType] = "application/x-www-form-urlencoded"
            return TransportBody(ByteBuffer(string: RequestTarget.QueryItem.encoded(try formFields(parameters, arrayFormat: arrayFormat).encodedQueryItems())))
        case .multipart:
            let multipart = MultipartBody()
            fields[.contentType] = multipart.contentType
            let parts = try formFields(parameters, arrayFormat: arrayFormat)
            do throws(TransportError) {
                return try multipart.body(parts)
            } catch {
                throw APIError(kind: .file, detail: error.detail, underlying: error.underlying)
            }
        }
    }

    /// The base query items not named by the request's own `items`, then those items.
    private func queryItems(_ items: [FormField]) throws(APIError) -> [RequestTarget.QueryItem] {
        guard !baseQuery.isEmpty else { return try items.encodedQueryItems() }
        let named = Set(items.map(\.name))
        return try (baseQuery.filter { !named.contains($0.name) } + items).encodedQueryItems()
    }

    private func formFields(_ parameters: some Encodable, arrayFormat: ArrayFormat) throws(APIError) -> [FormField] {
        do {
            return try formEncoder.fields(of: parameters, arrayFormat: arrayFormat)
        } catch let error as FormEncodingError {
            throw APIError(kind: .invalidRequest, detail: error.description, underlying: error)
        } catch {
            throw APIError(kind: .invalidRequest, underlying: error)
        }
    }


    private static func set(_ name: String, _ value: String, in fields: inout HTTPFields) throws(APIError) {
        guard let fieldName = HTTPField.Name(name), HeaderValidation.isValidName(name) else {
            throw APIError(kind: .invalidRequest, detail: "header name '\(PercentEncoding.encode(name, allowing: .unreserved))' is not a valid token")
        }
        guard HeaderValidation.isValidValue(value) else {
            throw APIError(kind: .invalidRequest, detail: "the value of header '\(name)' holds CR, LF or NUL")
        }
        fields[fieldName] = value
    }
}

extension [FormField] {
    /// The fields as query items, with file fields refused.
    fileprivate func encodedQueryItems() throws(APIError) -> [RequestTarget.QueryItem] {
        do {
            return try queryItems()
        } catch {
            throw APIError(kind: .invalidRequest, detail: error.description, underlying: error)
        }
    }
}
