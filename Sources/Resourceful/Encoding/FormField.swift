/// One name–value pair of a query string or form body, produced by ``FormEncoder``.
struct FormField: Sendable, Equatable {
    /// What a field holds.
    enum Value: Sendable, Equatable {
        case text(String)
        case file(MultipartFile)
        /// Values written as one, separated by literal commas (``ArrayFormat/comma``).
        case list([String])
    }

    /// The bracketed name, such as `filter[tags][]`.
    var name: String
    var value: Value
}

extension [FormField] {
    /// The fields as query items, both sides percent-encoded (RFC 3986 unreserved characters are
    /// kept; a list's values joined by literal commas). A file field is an error: files need
    /// ``BodyEncoding/multipart``.
    func queryItems() throws(FormEncodingError) -> [RequestTarget.QueryItem] {
        var items: [RequestTarget.QueryItem] = []
        items.reserveCapacity(count)
        for field in self {
            let value: String
            switch field.value {
            case .text(let text):
                value = PercentEncoding.encode(text, allowing: .unreserved)
            case .list(let values):
                value = values.map { PercentEncoding.encode($0, allowing: .unreserved) }.joined(separator: ",")
            case .file:
                throw .fileOutsideMultipart(field: field.name)
            }
            items.append(RequestTarget.QueryItem(encodedName: PercentEncoding.encode(field.name, allowing: .unreserved), encodedValue: value))
        }
        return items
    }

    /// The fields as `name=value` pairs joined by `&`, as ``queryItems()`` encodes them: a form body.
    func percentEncoded() throws(FormEncodingError) -> String {
        RequestTarget.QueryItem.encoded(try queryItems())
    }
}
