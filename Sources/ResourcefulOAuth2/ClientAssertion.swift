import Foundation
import JWTKit
import Resourceful

/// Signs the client assertions of `private_key_jwt` (RFC 7523 §2.2): `iss` and `sub` the client
/// ID, `aud` the token endpoint (whichever endpoint the assertion is sent to), a unique `jti`,
/// `iat` now and `exp` a minute later in whole seconds (RFC 7519 NumericDate; some servers refuse
/// fractions); RS256 for an RSA key, ES256 for a P-256 one, read from a PEM file.
struct ClientAssertionSigner: Sendable {
    /// How long an assertion is valid.
    static let lifetime: TimeInterval = 60

    private let keys: JWTKeyCollection
    let clientID: String

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var sub: SubjectClaim
        var aud: AudienceClaim
        var jti: IDClaim
        /// Whole seconds since 1970.
        var iat: Int
        /// Whole seconds since 1970.
        var exp: Int

        func verify(using algorithm: some JWTAlgorithm) throws {
            try ExpirationClaim(value: Date(timeIntervalSince1970: TimeInterval(exp))).verifyNotExpired()
        }
    }

    /// Reads the key in `file` as ssh reads one (``PrivateFile``): not through a symlink, opened
    /// once and checked on its descriptor, yours and not open to group or others; the error names
    /// the file and the `chmod 600` that fixes it, never its content.
    init(file: String, keyID: String?, clientID: String) async throws(OAuth2Error) {
        let pem: String
        do {
            pem = String(decoding: try PrivateFile.contents(of: file, maximumBytes: Self.maximumPEMBytes), as: UTF8.self)
        } catch {
            throw OAuth2Error(.configuration, "the private key file \(file) cannot be used: it \(error.reason)")
        }
        try await self.init(pem: pem, keyID: keyID, clientID: clientID, source: "the private key file \(file)")
    }

    /// Reads the key in `pem`; the error names `source` (where the key came from), never the
    /// key.
    init(pem: String, keyID: String?, clientID: String, source: String) async throws(OAuth2Error) {
        let keys = JWTKeyCollection()
        let kid = keyID.map { JWKIdentifier(string: $0) }
        if pem.utf8.count <= Self.maximumPEMBytes, let key = try? ES256PrivateKey(pem: pem) {
            await keys.add(ecdsa: key, kid: kid)
        } else if pem.utf8.count <= Self.maximumPEMBytes, let key = try? Insecure.RSA.PrivateKey(pem: pem) {
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: kid)
        } else {
            throw OAuth2Error(.configuration, "\(source) holds no RSA or P-256 private key in PEM")
        }
        self.keys = keys
        self.clientID = clientID
        self.keyID = kid
    }

    /// The largest PEM read: an RSA key of 8192 bits is under 7 KiB.
    static let maximumPEMBytes = 64 * 1024

    private let keyID: JWKIdentifier?

    /// A new assertion for `audience`, the token endpoint.
    func assertion(audience: String) async throws(OAuth2Error) -> String {
        let now = Int(Date().timeIntervalSince1970.rounded(.down))
        let claims = Claims(
            iss: IssuerClaim(value: clientID),
            sub: SubjectClaim(value: clientID),
            aud: AudienceClaim(value: [audience]),
            jti: IDClaim(value: UUID().uuidString),
            iat: now,
            exp: now + Int(Self.lifetime)
        )
        do {
            return try await keys.sign(claims, kid: keyID)
        } catch {
            throw OAuth2Error(.configuration, "the client assertion could not be signed")
        }
    }
}

/// Where the private key of `private_key_jwt` comes from: a PEM file, read once when the storage
/// is made, or a secret storage (file, environment, keyring), read at each token request so that
/// a rotated key is used from the next request on.
enum ClientAssertionKey: Sendable {
    case loaded(ClientAssertionSigner)
    case stored(any SecretStorage, name: String, kind: String, keyID: String?, clientID: String)

    /// The signer with the key as it is now.
    func signer() async throws(OAuth2Error) -> ClientAssertionSigner {
        switch self {
        case .loaded(let signer):
            return signer
        case .stored(let storage, let name, let kind, let keyID, let clientID):
            let source = "the private key '\(name)' of the \(kind) storage"
            let pem: String?
            do {
                pem = try await storage.secret(named: name)
            } catch {
                throw OAuth2Error(.configuration, "\(source) could not be read: \(OAuth2AuthenticationStorage.describe(error))")
            }
            guard let pem, !pem.isEmpty else { throw OAuth2Error(.configuration, "no private key is stored as '\(name)' in the \(kind) storage") }
            return try await ClientAssertionSigner(pem: pem, keyID: keyID, clientID: clientID, source: source)
        }
    }
}
