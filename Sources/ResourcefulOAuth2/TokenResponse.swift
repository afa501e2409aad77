import Foundation

/// A token endpoint's successful answer (RFC 6749 §5.1), checked.
struct TokenResponse: Sendable {
    /// The longest lifetime believed: a longer `expires_in` is a server's mistake.
    static let maximumLifetime = 366 * 24 * 3600
    /// The longest token read back from a storage: as long as a whole answer may be.
    static let maximumTokenBytes = AuthorizationServer.maximumResponseBytes

    var accessToken: String
    /// `expires_in`, when the server sent one.
    var lifetime: Duration?
    var refreshToken: String?
    var scope: String?

    /// The fields as sent, each of any JSON type: checked one by one below.
    private struct Wire: Decodable {
        var accessToken: Field?
        var tokenType: Field?
        var expiresIn: Field?
        var refreshToken: Field?
        var scope: Field?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token", tokenType = "token_type", expiresIn = "expires_in"
            case refreshToken = "refresh_token", scope
        }
    }

    /// A JSON value as far as a token response needs it.
    enum Field: Decodable {
        case string(String)
        case integer(Int)
        /// A whole positive number too large for `Int`, such as `1e30`.
        case large
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .string(text)
            } else if let number = try? container.decode(Int.self) {
                self = .integer(number)
            } else if let number = try? container.decode(Double.self), number.isFinite, number >= Double(Int.max) {
                self = .large
            } else {
                self = .other
            }
        }

        var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }
    }

    /// Reads a token response's bytes, refusing what cannot be used: not a JSON object, no
    /// `access_token`, one that cannot go in a header, a `token_type` other than `Bearer`, an
    /// `expires_in` that is not a whole number of seconds from 1 to a year.
    init(json: Data) throws(OAuth2Error) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: json)
        } catch {
            throw OAuth2Error(.invalidResponse, "the token response is not a JSON object")
        }
        guard let token = wire.accessToken?.string, !token.isEmpty else {
            throw OAuth2Error(.invalidResponse, "the token response has no access_token")
        }
        guard OAuth2Grammar.all(token, OAuth2Grammar.isVisible) else {
            throw OAuth2Error(.invalidResponse, "the access token holds characters a header cannot carry")
        }
        guard let type = wire.tokenType?.string, type.lowercased() == "bearer" else {
            throw OAuth2Error(.invalidResponse, "the token response's token_type is not Bearer")
        }
        accessToken = token
        if let value = wire.expiresIn {
            lifetime = .seconds(try Self.seconds(value))
        }
        if let refresh = wire.refreshToken {
            guard let refresh = refresh.string, OAuth2Grammar.all(refresh, OAuth2Grammar.isPrintable) else {
                throw OAuth2Error(.invalidResponse, "the token response's refresh_token is not a string of printable characters")
            }
            refreshToken = refresh
        }
        // Kept for `resourceful status` only when it is a bounded list of scope tokens (RFC 6749
        // §3.3), so that no control character, escape sequence or sentence is kept; otherwise
        // left out. What is shown of it is ``OAuth2Status/scopeSummary(askedFor:)``.
        scope = wire.scope?.string.flatMap(OAuth2Status.boundedScope)
    }

    /// `expires_in` as a whole number of seconds (a number, or digits in a string as some servers
    /// send), 1 to ``maximumLifetime``.
    private static func seconds(_ value: Field) throws(OAuth2Error) -> Int {
        let seconds: Int? =
            switch value {
            case .integer(let number): number
            case .string(let text) where text.utf8.count <= 12: Int(text)
            default: nil
            }
        guard let seconds, (1...maximumLifetime).contains(seconds) else {
            throw OAuth2Error(.invalidResponse, "the token response's expires_in is not a number of seconds from 1 to \(maximumLifetime)")
        }
        return seconds
    }
}

/// An OAuth 2 error response (RFC 6749 §5.2).
struct ErrorResponse: Decodable {
    var error: String
    var errorDescription: String?

    enum CodingKeys: String, CodingKey {
        case error, errorDescription = "error_description"
    }

    /// The error code when it is one that RFC 6749 (§4.1.2.1, §5.2), RFC 7009 (§2.2.1) or
    /// RFC 8628 (§3.5) defines (``registeredCodes``); nil for any other, which is free text a
    /// hostile server could address to a person (`Session-locked.Run-curl.evil.example…`), and so
    /// never shown.
    var code: String? {
        Self.registeredCodes.contains(error) ? error : nil
    }

    /// The error codes RFC 6749, RFC 7009 and RFC 8628 define: the only ones shown.
    static let registeredCodes: Set<String> = [
        "invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope",
        "access_denied", "unsupported_response_type", "server_error", "temporarily_unavailable", "unsupported_token_type",
        "authorization_pending", "slow_down", "expired_token",
    ]
}
