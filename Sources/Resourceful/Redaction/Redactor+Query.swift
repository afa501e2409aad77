import Foundation

extension Redactor {
    /// A query string with the values of masked keys replaced.
    package func query(_ query: String) -> String {
        guard !query.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            return isMasked(formName: name) ? name + "=" + Self.mask : String(pair)
        }.joined(separator: "&")
    }

    /// Query items as a query string, with the values of masked names replaced.
    package func query(_ items: [RequestTarget.QueryItem]) -> String {
        var result = ""
        for item in items {
            if !result.isEmpty { result += "&" }
            if item.encodedValue != nil, isMasked(decodedFormName: item.name) {
                result += item.encodedName + "=" + Self.mask
            } else {
                item.write(to: &result)
            }
        }
        return result
    }

    /// `target`'s URL with the values of masked query names replaced.
    package func maskedURL(_ target: RequestTarget) -> String {
        var masked = target
        masked.query = []
        let url = masked.url
        return target.query.isEmpty ? url : url + "?" + query(target.query)
    }

    /// `url` with the values of masked query keys replaced.
    package func maskedURL(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let fragment = url[question...].firstIndex(of: "#")
        let query = url[url.index(after: question)..<(fragment ?? url.endIndex)]
        return String(url[...question]) + self.query(String(query)) + (fragment.map { String(url[$0...]) } ?? "")
    }

    /// Whether a query or form name such as `user[password]` or `user%5Bpassword%5D` ends in a masked key.
    package func isMasked(formName: String) -> Bool {
        isMasked(decodedFormName: RequestTarget.QueryItem(encodedName: formName, encodedValue: nil).name)
    }

    /// Whether a decoded query or form name such as `user[password]` ends in a masked key.
    package func isMasked(decodedFormName decoded: String) -> Bool {
        let last = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" }).last.map(String.init) ?? decoded
        return names.contains(last)
    }
}
