internal import OpenAPIKit

/// What the document's security schemes ask of a request, as documentation: which credential,
/// and how Resourceful sends it from the authentication storage. Never a literal credential.
struct SecurityDocumentation {
    private let schemes: [(name: String, scheme: OpenAPI.SecurityScheme)]
    private(set) var diagnostics: [OpenAPIDiagnostic] = []

    init(document: OpenAPI.Document) {
        var schemes: [(String, OpenAPI.SecurityScheme)] = []
        var diagnostics: [OpenAPIDiagnostic] = []
        for (key, either) in document.components.securitySchemes {
            let pointer = JSONPointer.root.appending("components").appending("securitySchemes").appending(key.rawValue)
            guard let scheme = try? document.components.lookup(either) else {
                diagnostics.append(.init(pointer: pointer.description, message: "the scheme's reference does not resolve"))
                continue
            }
            if case .apiKey(let name, let location) = scheme.type, location != .header {
                diagnostics.append(.init(
                    pointer: pointer.description,
                    message: "an API key in the \(location.rawValue) (`\(name)`) is not sent from the authentication storage; add it in a middleware"
                ))
            }
            schemes.append((key.rawValue, scheme))
        }
        self.schemes = schemes
        self.diagnostics = diagnostics
    }

    /// One line per scheme, for the generated namespace's documentation.
    var overview: [String] {
        guard !schemes.isEmpty else { return [] }
        let lines = schemes.map { "- `\($0.name)`: \(explanation(of: $0.scheme))" }
        return ["Security schemes:\n" + lines.joined(separator: "\n")]
    }

    /// A request's note: which credentials it needs, or that it needs none.
    /// `nil` says nothing: the document does not say.
    func notes(for requirements: [OpenAPI.SecurityRequirement]?) -> [String] {
        guard let requirements else { return [] }
        let alternatives = requirements.map { requirement in
            requirement.keys.compactMap(\.name).sorted().map(summary).joined(separator: " and ")
        }.filter { !$0.isEmpty }
        guard !alternatives.isEmpty else { return ["Needs no credential."] }
        return ["Needs a credential from the authentication storage: \(alternatives.joined(separator: " or "))."]
    }

    /// `` `name` (where it is sent) ``.
    private func summary(_ name: String) -> String {
        guard let scheme = schemes.first(where: { $0.name == name })?.scheme else { return "`\(name)`" }
        let place: String
        switch scheme.type {
        case .http(let kind, _) where kind.lowercased() == "bearer": place = "a bearer token in `Authorization`"
        case .http(let kind, _): place = "HTTP `\(kind)` in `Authorization`"
        case .apiKey(let key, .header): place = "an API key in the `\(key)` header"
        case .apiKey(let key, let location): place = "an API key in the \(location.rawValue) parameter `\(key)`, not sent by Resourceful"
        case .oauth2, .openIdConnect: place = "an OAuth 2 access token in `Authorization`"
        case .mutualTLS: place = "a client certificate"
        }
        return "`\(name)` (\(place))"
    }

    private func explanation(of scheme: OpenAPI.SecurityScheme) -> String {
        switch scheme.type {
        case .http(let name, _) where name.lowercased() == "bearer":
            "a bearer token, sent as `Authorization: Bearer …` from the authentication storage."
        case .http(let name, _):
            "HTTP `\(name)` authentication, sent as `Authorization` from the authentication storage (its scheme: `authentication.keyring.scheme`)."
        case .apiKey(let name, .header):
            "an API key in the `\(name)` header, from the authentication storage: set `authentication.headerName` to `\(name)` and the storage's scheme to empty."
        case .apiKey(let name, let location):
            "an API key in the \(location.rawValue) parameter `\(name)`: not sent by Resourceful; add it in a middleware."
        case .oauth2, .openIdConnect:
            "an OAuth 2 access token, sent as `Authorization: Bearer …` from the authentication storage; a credential refresher keeps it current."
        case .mutualTLS:
            "a client certificate: `http.tls.clientCertificateFile` and `http.tls.clientKeyFile` in the configuration."
        }
    }
}
