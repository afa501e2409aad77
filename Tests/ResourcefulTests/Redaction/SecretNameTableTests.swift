import Foundation
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
        // A `pass`, `key`, `auth`, `secret` or `token` word at the end, in any case convention
        "db_pass", "smtp_pass", "userPass", "DB_PASS", "mysql-pass", "stripe_key", "STRIPE_KEY", "sendgridKey", "bearer",
        "X-Bearer", "X-Auth", "X-Key", "basic_auth", "proxyAuth", "vault.secret", "MY_SECRET", "auth_code", "authCode",
        "password_confirmation", "passwordConfirmation", "new_passwd_again", "s3Key", "user[pass]",
        // `pw`, `creds`, one-time codes, and a word for a secret followed by words for the form it takes
        "pw", "db_pw", "userPw", "creds", "SecretString", "SecretBinary", "SECRET_KEY_BASE", "token_value", "api_key_value",
        "client_secret_value", "auth_token_value", "otp_code", "mfa_code", "totp", "privateKeyPem", "key_material",
        "keyData", "connection_string", "ConnectionString", "webhook_url", "SENDGRID_API_KEY_2", "apiKeyHeader",
        "auth_header", "id_token_hint", "verification_code", "pin_code", "pat",
        // A number or a word saying which one after the word for a secret
        "password2", "access_token2", "apiKey2", "secret1", "clientSecret2", "token1", "token_v2", "accessTokenV2",
        "api_key_old", "secret_key_live", "stripe_secret_test", "secret_new", "access_token_encrypted", "x_token_prev",
        "github_pat", "gh_pat",
    ]

    static let ordinary = [
        "id", "name", "email", "sortKey", "primaryKey", "publicKey", "public_key_id", "idempotency_key", "Idempotency-Key",
        "monkey", "bypass", "compass", "passenger", "passport", "author", "authority", "Accept", "Content-Type", "code",
        "keyboard", "tokenizer", "signed", "X-Request-Id", "AWSAccessKeyId", "X-Amz-Date", "X-Amz-Algorithm", "page",
        // Whole words only, and keys of ordinary kinds
        "sort_key", "partition_key", "cache_key", "foreign_key", "PrimaryKey", "key_id", "keyId", "token_type", "tokenCount",
        "expires_in", "session_count", "author_id", "passenger_count", "keyboard_layout", "boarding_pass", "bypass_cache",
        "authority_url", "LastEvaluatedKey", "ExclusiveStartKey", "hotkey", "turnkey", "oauth", "oauth_provider",
        // An identifier is not a secret; codes that are not one-time codes; the form of an ordinary key
        "private_key_id", "SECRET_KEY_ID", "country_code", "error_code", "keyCode", "status_code", "zip_code",
        "publicKeyPem", "sort_key_value", "passwordless", "data", "value", "base_url", "pwned", "path", "pattern", "refresh",
        // Numbers and qualifiers after ordinary words stay ordinary
        "sort_key_old", "page2", "keyboard2", "monkey1", "v2", "test", "new_name", "patch", "path_v2", "sha256", "md5",
    ]

    /// Header names that can carry a credential wherever the word stands, and ordinary ones.
    static let secretHeaders = [
        "X-Auth", "X-Key", "X-Auth-User", "X-Api-Key-Id", "X-Session-Id", "X-Bearer-Token", "X-Upstream-Secret-Name",
        "Authorization", "Proxy-Authorization", "Cookie", "X-Signature-Ed25519", "X-Password-Hint", "X-Pw",
        "X-Password2", "X-Api-Token2", "Api-Key2", "X-Pat",
    ]
    static let ordinaryHeaders = [
        "Accept", "Keep-Alive", "Content-Type", "WWW-Authenticate", "X-Request-Id", "Idempotency-Key", "Cache-Control",
        "X-Amz-Date", "X-RateLimit-Remaining", "Location", "ETag", "Sort-Key",
        // Secrets by configuration, not by name: a team's key, an access level
        "X-Honeycomb-Team", "X-Access", "Access-Control-Allow-Origin",
    ]

    @Test(arguments: secretHeaders)
    func headerIsDroppedAndMasked(name: String) {
        #expect(SensitiveNames.isSensitiveHeader(name))
        #expect(Redactor(settings: APIConfig.LogSettings()).masksHeader(name))
    }

    @Test(arguments: ordinaryHeaders)
    func headerIsKept(name: String) {
        #expect(!SensitiveNames.isSensitiveHeader(name))
    }

    @Test func namesAreReadAsWords() {
        #expect(SensitiveNames.words(of: "userPass") == ["user", "pass"])
        #expect(SensitiveNames.words(of: "APIKey") == ["api", "key"])
        #expect(SensitiveNames.words(of: "X-Auth-Token") == ["x", "auth", "token"])
        #expect(SensitiveNames.words(of: "s3Key") == ["s3", "key"])
        #expect(SensitiveNames.words(of: "db_pass\u{200B}") == ["db", "pass"])
    }

    @Test func jsonInsideAStringIsMaskedOrReplaced() throws {
        let redactor = Redactor(settings: APIConfig.LogSettings())
        func masked(_ json: String) throws -> String {
            String(decoding: try #require(redactor.maskedBody(Data(json.utf8), contentType: "application/json")), as: UTF8.self)
        }
        // Parsed, masked and written back as a string.
        #expect(try masked(#"{"payload":"{\"password\":\"S-1\",\"user\":\"ada\"}"}"#) == #"{"payload":"{\"password\":\"***\",\"user\":\"ada\"}"}"#)
        // Inside an array, with spaces, and two strings deep.
        let deep = try masked(#"{"a":[" {\"x\":\"{\\\"db_pass\\\":\\\"S-2\\\"}\"} "]}"#)
        #expect(!deep.contains("S-2"))
        // Looks like JSON but is not: replaced whole.
        #expect(try masked(#"{"note":"{password: S-3}"}"#) == #"{"note":"***"}"#)
        // Documents in strings nest no deeper than one document may: past it, replaced.
        let outer = String(repeating: "[", count: 100), inner = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(try masked(outer + "\"" + inner + "\"" + String(repeating: "]", count: 100)) == outer + #""***""# + String(repeating: "]", count: 100))
        // Ordinary text stays.
        #expect(try masked(#"{"note":"[INFO] {ok}","n":"{}"}"#) == #"{"note":"[INFO] {ok}","n":"{}"}"#)
    }

    /// String values that hold a secret another way: a URL's userinfo (any scheme), a form, JSON
    /// after a byte order mark or after text, JSON encoded twice.
    @Test(arguments: [
        (#"{"DATABASE_URL":"postgres://app:S-1@db.internal:5432/prod"}"#, #"{"DATABASE_URL":"postgres://***@db.internal:5432/prod"}"#),
        (#"{"REDIS_URL":"redis://:S-2@r:6379"}"#, #"{"REDIS_URL":"redis://***@r:6379"}"#),
        (#"{"dsn":"https:u:S-3@h.example/x"}"#, #"{"dsn":"https:***@h.example/x"}"#),
        (#"{"next":"https://h.example/cb?access_token=S-4&page=2"}"#, #"{"next":"https://h.example/cb?access_token=***&page=2"}"#),
        (#"{"p3":"password=S-5&a=1"}"#, #"{"p3":"password=***&a=1"}"#),
        (#"{"p2":"\ufeff{\"password\":\"S-6\"}"}"#, #"{"p2":"{\"password\":\"***\"}"}"#),
        (#"{"p":"\"{\\\"password\\\":\\\"S-7\\\"}\""}"#, #"{"p":"\"{\\\"password\\\":\\\"***\\\"}\""}"#),
        (#"{"payload":"prefix {\"password\":\"S-8\"}"}"#, #"{"payload":"***"}"#),
        (#"{"log":"user=ada password=S-9"}"#, #"{"log":"***"}"#),
        (#"{"headers":["Accept: */*","Authorization: Bearer S-10"]}"#, #"{"headers":["Accept: */*","***"]}"#),
        (#"{"config":"user: ada\npassword: S-11"}"#, #"{"config":"***"}"#),
        (#"{"https://u:S-12@h.example/":1}"#, #"{"https://***@h.example/":1}"#),
        (#"{"note":"mail ada@example.com","msg":"invalid token: expired","q":"a=1&b=2"}"#, #"{"note":"mail ada@example.com","msg":"invalid token: expired","q":"a=1&b=2"}"#),
    ])
    func stringValuesLoseTheSecretsTheyHold(json: String, shown: String) throws {
        let redactor = Redactor(settings: APIConfig.LogSettings())
        let masked = try #require(redactor.maskedBody(Data(json.utf8), contentType: "application/json"))
        #expect(String(decoding: masked, as: UTF8.self) == shown)
    }

    @Test(arguments: secrets)
    func isMasked(name: String) {
        #expect(SensitiveNames().contains(name))
    }

    @Test(arguments: ordinary)
    func isLeftReadable(name: String) {
        #expect(!SensitiveNames().contains(name))
    }
}
