@testable import Resourceful
import Testing

/// Real-world names of secrets (AWS, Stripe, GitHub, Slack, OAuth 2) that the built-in rule
/// masks, and ordinary names it must leave readable: one rule decides for log lines, recordings,
/// cURL exports, the HTTP cache and the headers dropped before another origin.
@Suite struct SecretNameTableTests {
    static let secrets = [
        // AWS
        "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "X-Amz-Security-Token", "X-Amz-Signature",
        "X-Amz-Credential", "aws_session_token",
        // Stripe, GitHub, Slack
        "Authorization", "api_key", "stripe_secret_key", "X-GitHub-Token", "access_token", "client_secret",
        "X-Slack-Signature", "token", "signing_secret", "webhook_secret",
        // OAuth 2 and JWT
        "refresh_token", "id_token", "code_verifier", "client_assertion", "assertion", "jwt", "X-JWT", "id_jwt",
        "device_code", "user_code", "authorization_code",
        // Common spellings
        "secret_key", "secretKey", "signing_key", "X-Signing-Key", "X-Secret-Key", "private_key", "encryption_key",
        "master_key", "pwd", "db_pwd", "pass", "password", "passcode", "passphrase", "Cookie", "Set-Cookie",
        "Proxy-Authorization", "X-Api-Key", "session", "sid_session", "key", "sig", "otp", "pin", "auth",
        // Gateways' key headers (Azure API Management, Azure Functions, Cloudflare), and `Authentication`
        "Ocp-Apim-Subscription-Key", "X-Functions-Key", "X-Auth-Key", "Authentication", "\u{FEFF}pin",
    ]

    static let ordinary = [
        "id", "name", "email", "sortKey", "primaryKey", "publicKey", "public_key_id", "idempotency_key", "Idempotency-Key",
        "monkey", "bypass", "compass", "passenger", "passport", "author", "authority", "Accept", "Content-Type", "code",
        "keyboard", "tokenizer", "signed", "X-Request-Id", "AWSAccessKeyId", "X-Amz-Date", "X-Amz-Algorithm", "page",
    ]

    @Test(arguments: secrets)
    func isMasked(name: String) {
        #expect(SensitiveNames().contains(name))
    }

    @Test(arguments: ordinary)
    func isLeftReadable(name: String) {
        #expect(!SensitiveNames().contains(name))
    }
}
