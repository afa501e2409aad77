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

    /// Why a request cannot be built. The builder's one error type: ``API`` makes it an
    /// ``APIError`` once, at ``APIError/Stage/buildingRequest`` (``apiError``).
    enum Failure: Error {
        /// The request cannot be sent as it is (a path segment, a header field, a parameter),
        /// described when the description holds no value of the request.
        case invalid(String?, underlying: (any Error)? = nil)
        /// The encoder refused the parameters.
        case encoding(any Error)
        /// A file to send cannot be read.
        case file(TransportError)
        /// The configuration is refused.
        case configuration(APIError)

        /// The failure as the call reports it.
        var apiError: APIError {
            let kind: APIError.Kind
            var detail: String?
            var underlying: (any Error)?
            var codingPath: String?
            switch self {
            case .configuration(let error): return error
            case .invalid(let description, let error): (kind, detail, underlying) = (.invalidRequest, description, error)
            case .file(let error): (kind, detail, underlying) = (.file, error.detail, error.underlying)
            case .encoding(let error):
                (kind, underlying) = (.encodingFailed, error)
                if case .invalidValue(_, let context) = error as? EncodingError { codingPath = APIError.render(context.codingPath) }
            }
            var error = APIError(kind: kind, detail: detail, underlying: underlying)
            error.codingPath = codingPath
            return error
        }
    }


    /// The configured base URL: its origin and path, no query.
    let base: RequestTarget
    /// `Accept`, `User-Agent` and the configured base header fields, checked and merged once with
    /// the rest of the configuration: the fields every request starts from, or why the
    /// configuration is refused.
    private let baseHeaders: Result<HTTPFields, Failure>
    /// The configured base query items, in name order.
    private let baseQuery: [FormField]
    private let formEncoder: FormEncoder

    init(config: APIConfig) {
        let parsed = RequestTarget(parsing: config.baseURL.absoluteString)
        var basePath = parsed.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        base = RequestTarget(origin: parsed.origin, basePath: basePath.isEmpty ? "" : "/" + basePath, path: "")
        baseHeaders = Result { () throws(Failure) in
            if let problem = config.validationError() { throw .configuration(problem) }
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
    ) throws(Failure) -> Built {
        let path = request.path
        guard !path.hasUnusableSegment else {
            throw .invalid("an interpolated path segment is empty, '.' or '..'")
        }
        var fields = try baseHeaders.get()
        let headers = request.headers
        if !headers.isEmpty {
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { try Self.set(name, value, in: &fields) }
        }
        let credentialField = options.credentialField
        if let authorization, fields[credentialField] == nil {
            guard HeaderValidation.isValidValue(authorization) else {
                throw .invalid("the stored credential holds CR, LF or NUL")
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
    ) throws(Failure) -> TransportBody {
        if let upload = parameters as? FileUpload {
            if fields[.contentType] == nil { fields[.contentType] = upload.contentType }
            do throws(TransportError) {
                return try TransportBody(contentsOfFile: upload.fileURL.path)
            } catch {
                throw .file(error)
            }
        }
        switch encoding {
        case .json:
            if fields[.contentType] == nil { fields[.contentType] = "application/json" }
            do {
                return TransportBody(ByteBuffer(data: try encoder.encode(parameters)))
            } catch {
                throw .encoding(error)
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
                throw .file(error)
            }
        }
    }

    /// The base query items not named by the request's own `items`, then those items.
    private func queryItems(_ items: [FormField]) throws(Failure) -> [RequestTarget.QueryItem] {
        guard !baseQuery.isEmpty else { return try items.encodedQueryItems() }
        let named = Set(items.map(\.name))
        return try (baseQuery.filter { !named.contains($0.name) } + items).encodedQueryItems()
    }

    private func formFields(_ parameters: some Encodable, arrayFormat: ArrayFormat) throws(Failure) -> [FormField] {
        do {
            return try formEncoder.fields(of: parameters, arrayFormat: arrayFormat)
        } catch {
            throw .invalid((error as? FormEncodingError)?.description, underlying: error)
        }
    }


    private static func set(_ name: String, _ value: String, in fields: inout HTTPFields) throws(Failure) {
        guard let fieldName = HTTPField.Name(name), HeaderValidation.isValidName(name) else {
            throw .invalid("header name '\(PercentEncoding.encode(name, allowing: .unreserved))' is not a valid token")
        }
        guard HeaderValidation.isValidValue(value) else {
            throw .invalid("the value of header '\(name)' holds CR, LF or NUL")
        }
        fields[fieldName] = value
    }
}

extension [FormField] {
    /// The fields as query items, with file fields refused.
    fileprivate func encodedQueryItems() throws(RequestBuilder.Failure) -> [RequestTarget.QueryItem] {
        do {
            return try queryItems()
        } catch {
            throw .invalid(error.description, underlying: error)
        }
    }
}
