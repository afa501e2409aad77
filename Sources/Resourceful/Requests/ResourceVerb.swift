package import HTTPTypes

/// The five things a client does with a REST resource.
///
/// Each verb maps to one HTTP method and decides where a request's parameters go:
///
/// | verb | method | parameters |
/// | --- | --- | --- |
/// | ``show`` | `GET` | query string |
/// | ``index`` | `GET` | query string |
/// | ``create`` | `POST` | body |
/// | ``update`` | `PUT` (or `PATCH`, see ``RequestOptions/updateMethod``) | body |
/// | ``delete`` | `DELETE` | query string |
public enum ResourceVerb: String, Sendable, Hashable, CaseIterable {
    /// Read one resource: `GET`.
    case show
    /// List resources: `GET`.
    case index
    /// Create a resource: `POST`.
    case create
    /// Replace or change a resource: `PUT`, or `PATCH` where the request asks for it.
    case update
    /// Remove a resource: `DELETE`.
    case delete

    /// Whether this verb sends its parameters in the request body (create, update) rather than
    /// in the query string (show, index, delete).
    var sendsBody: Bool {
        switch self {
        case .create, .update: true
        case .show, .index, .delete: false
        }
    }

    /// The HTTP method this verb uses, given how the request wants updates sent: the one place
    /// a verb becomes a method.
    package func method(update: UpdateMethod = .put) -> HTTPRequest.Method {
        switch (self, update) {
        case (.show, _), (.index, _): .get
        case (.create, _): .post
        case (.update, .put): .put
        case (.update, .patch): .patch
        case (.delete, _): .delete
        }
    }
}

/// How an ``ResourceVerb/update`` request is sent.
public enum UpdateMethod: Sendable, Hashable {
    /// `PUT`: the body replaces the resource (the default).
    case put
    /// `PATCH`: the body holds only the fields that change.
    case patch
}
