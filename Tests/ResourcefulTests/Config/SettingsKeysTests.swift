import Configuration
import Foundation
import Logging
import Resourceful
import Testing

/// Each settings type reads and checks its own keys (`init(keys:)`), so that an app can read one
/// part of the configuration from a section of its own, with the same rules and errors as a file.
@Suite struct SettingsKeysTests {
    private func keys(_ values: [AbsoluteConfigKey: ConfigValue], scope: String) -> ConfigurationKeys {
        ConfigurationKeys(configReader: ConfigReader(provider: InMemoryProvider(values: values)), scope: scope)
    }

    @Test func eachPartReadsItsOwnScope() throws {
        let values: [AbsoluteConfigKey: ConfigValue] = [
            "app.http.maxRedirects": 2,
            "app.http.tls.minimumVersion": 1.3,
            "app.http.proxy": "none",
            "app.retry.maxAttempts": 5,
            "app.retry.retryableStatuses": .init(.stringArray(["503"]), isSecret: false),
            "app.logging.level": "debug",
            "app.coding.keyStrategy": "snakeCase",
            "app.cache.storesAuthorizedResponses": true,
            "app.authentication.storages": .init(.stringArray(["file", "vault"]), isSecret: false),
            "app.authentication.file.directory": "/srv/secrets",
        ]
        let http = try APIConfig.HTTPSettings(keys: keys(values, scope: "app.http"))
        #expect(http.maxRedirects == 2 && http.tls.minimumVersion == .v1_3 && http.proxy == APIConfig.ProxySetting.none)
        #expect(http.idleTimeout == APIConfig.HTTPSettings().idleTimeout)
        let retry = try APIConfig.RetryPolicy(keys: keys(values, scope: "app.retry"))
        #expect(retry.maxAttempts == 5 && retry.retryableStatuses == [503])
        #expect(try APIConfig.LogSettings(keys: keys(values, scope: "app.logging")).level == .debug)
        #expect(try APIConfig.Coding(keys: keys(values, scope: "app.coding")).keyStrategy == .snakeCase)
        #expect(try APIConfig.CacheSettings(keys: keys(values, scope: "app.cache")).storesAuthorizedResponses)
        let authentication = try APIConfig.AuthenticationSettings(keys: keys(values, scope: "app.authentication"))
        #expect(authentication.storages == ["file", "vault"] && authentication.fileDirectory == "/srv/secrets")
        // The keys of the kinds a factory brings stay for that factory.
        #expect(authentication.keys?.scope == "app.authentication")
    }

    @Test(arguments: [
        ("app.http.maxRedirects", ConfigValue(.int(1000), isSecret: false), "app.http"),
        ("app.http.tls.minimumVersion", ConfigValue(.string("1.1"), isSecret: false), "app.http"),
        ("app.http.proxy", ConfigValue(.string("http://user:hunter2-proxy@proxy.example:3128"), isSecret: false), "app.http"),
        ("app.retry.retryableStatuses", ConfigValue(.stringArray(["fivehundred"]), isSecret: false), "app.retry"),
        ("app.logging.level", ConfigValue(.string("loud"), isSecret: false), "app.logging"),
        ("app.coding.decoder", ConfigValue(.string("fastest"), isSecret: false), "app.coding"),
        ("app.authentication.file.directory", ConfigValue(.string("relative"), isSecret: false), "app.authentication"),
    ])
    func aBadValueNamesItsFullKeyAndNeverTheValue(key: String, value: ConfigValue, scope: String) throws {
        let keys = keys([AbsoluteConfigKey(key.split(separator: ".").map(String.init)): value], scope: scope)
        let error = #expect(throws: APIError.self) {
            switch scope {
            case "app.http": _ = try APIConfig.HTTPSettings(keys: keys)
            case "app.retry": _ = try APIConfig.RetryPolicy(keys: keys)
            case "app.logging": _ = try APIConfig.LogSettings(keys: keys)
            case "app.coding": _ = try APIConfig.Coding(keys: keys)
            default: _ = try APIConfig.AuthenticationSettings(keys: keys)
            }
        }
        #expect(error?.kind == .invalidConfiguration)
        let description = error.map { "\($0)" } ?? ""
        #expect(description.contains("'\(key)'"), "\(description)")
        let shown = description.contains("hunter2-proxy")
        #expect(!shown, "the error shows the value")
    }

    @Test func aClientCertificateWithoutItsKeyIsRefused() {
        let keys = keys(["app.tls.clientCertificateFile": "/etc/client.pem"], scope: "app.tls")
        let error = #expect(throws: APIError.self) { _ = try APIConfig.TLSSettings(keys: keys) }
        #expect(error.map { "\($0)" }?.contains("'app.tls.clientKeyFile'") == true)
    }
}
