import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// `http.proxy` against tinyproxy, a real forward proxy: the environment's variables, `NO_PROXY`,
/// `CONNECT` for https, and `Proxy-Authorization` from the credential storage, never logged.
@Suite(.serialized) struct ProxyTests {
    /// One call to `url` through a transport made from `settings` and `environment`; the error, if any.
    ///
    /// A loopback target never goes through a proxy; `proxiesLoopback` lets these tests of the
    /// route itself reach their servers, all on this machine, through tinyproxy.
    private func call(
        _ url: String,
        environment: [String: String],
        proxyAuthorization: String? = nil,
        proxiesLoopback: Bool = false,
        configure: (inout APIConfig.HTTPSettings) -> Void = { _ in }
    ) async -> APIError? {
        guard proxiesLoopback else {
            return await liveCall(url, environment: environment, proxyAuthorization: proxyAuthorization, configure: configure)
        }
        var config = APIConfig(baseURL: URL(string: url)!, service: "s")
        config.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20))
        configure(&config.http)
        let transport = AsyncHTTPClientTransport(
            settings: config.http, environment: environment, proxyAuthorization: proxyAuthorization, proxiesLoopback: true
        )
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
        var failure: APIError?
        do {
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
        } catch {
            failure = error
        }
        try? await transport.shutdown()
        return failure
    }

    /// curl's rule: a loopback target goes direct whatever the variables or `http.proxy` say, so
    /// that what plain http carries (a client secret to a local token endpoint) stays on the
    /// machine.
    @Test func loopbackTargetsNeverGoThroughAProxy() async throws {
        let proxy = try await Tinyproxy.start()
        try await MockServer.withRunning { server in
            server.stub(.get, "/x", .status(.noContent))
            let port = server.baseURL.port ?? 0
            let settings: [(environment: [String: String], setting: APIConfig.ProxySetting?)] = [
                (["http_proxy": proxy.url], nil),
                (
                    [
                        "http_proxy": proxy.url, "https_proxy": proxy.url, "HTTPS_PROXY": proxy.url, "ALL_PROXY": proxy.url,
                        "all_proxy": proxy.url,
                    ],
                    nil
                ),
                (["http_proxy": proxy.url, "no_proxy": "other.test"], nil),
                ([:], .url(URL(string: proxy.url)!)),
                (["http_proxy": proxy.url], .url(URL(string: proxy.url)!)),
            ]
            var sent = 0
            for (environment, setting) in settings {
                for host in ["127.0.0.1", "localhost", "LOCALHOST"] {
                    let error = await call("http://\(host):\(port)", environment: environment) { http in
                        if let setting { http.proxy = setting }
                    }
                    #expect(error == nil, "\(host) \(environment)")
                    sent += 1
                }
            }
            // Every call reached the server directly; the proxy was asked for none of them.
            #expect(server.requests.count == sent)
            #expect(!proxy.requests.contains { $0.contains(":\(port)") }, "\(proxy.requests)")
            // Nor for other loopback forms, where nothing listens: the call fails on its own.
            let closed = try Nginx.freePort()
            let others = ["http://127.0.0.2", "http://[::1]", "https://127.0.0.1", "http://127.1"]
                .map { "\($0):\(closed)" }
            for url in others {
                _ = await call(url, environment: ["http_proxy": proxy.url, "https_proxy": proxy.url]) { $0.connectRetryBudget = .zero }
            }
            #expect(!proxy.requests.contains { $0.contains(":\(closed)") }, "\(proxy.requests)")
            // A name that is not loopback still goes through the proxy.
            _ = await call("http://resourceful-proxy-check.invalid:\(closed)", environment: ["http_proxy": proxy.url])
            #expect(proxy.requests.contains { $0.contains("resourceful-proxy-check.invalid:\(closed)") }, "\(proxy.requests)")
        }
        try await proxy.stop()
    }

    @Test func theEnvironmentsProxyCarriesTheCallAndNoProxyBypassesIt() async throws {
        let proxy = try await Tinyproxy.start()
        try await MockServer.withRunning { server in
            server.stub(.get, "/x", .status(.noContent))
            let target = "127.0.0.1:\(server.baseURL.port ?? 0)"
            #expect(await call(server.baseURL.absoluteString, environment: ["http_proxy": proxy.url], proxiesLoopback: true) == nil)
            #expect(proxy.requests.filter { $0.contains(target) }.count == 1, "\(proxy.requests)")
            // Upper-case HTTP_PROXY is never read (a CGI program gets a request's `Proxy` field there).
            #expect(await call(server.baseURL.absoluteString, environment: ["HTTP_PROXY": proxy.url], proxiesLoopback: true) == nil)
            #expect(proxy.requests.filter { $0.contains(target) }.count == 1, "\(proxy.requests)")
            // Lower case, and a NO_PROXY that names the target (or a block holding it): direct.
            for noProxy in ["127.0.0.1", "localhost,127.0.0.0/8", "*"] {
                let environment = ["http_proxy": proxy.url, "no_proxy": noProxy]
                #expect(await call(server.baseURL.absoluteString, environment: environment, proxiesLoopback: true) == nil)
            }
            #expect(proxy.requests.filter { $0.contains(target) }.count == 1)
            // `none` ignores the variables; a configured URL needs none.
            let none = await call(server.baseURL.absoluteString, environment: ["http_proxy": proxy.url], proxiesLoopback: true) { $0.proxy = .none }
            #expect(none == nil)
            #expect(proxy.requests.filter { $0.contains(target) }.count == 1)
            let configured = await call(server.baseURL.absoluteString, environment: [:], proxiesLoopback: true) { $0.proxy = .url(URL(string: proxy.url)!) }
            #expect(configured == nil)
            #expect(proxy.requests.filter { $0.contains(target) }.count == 2)
            #expect(server.requests.count == 7)
        }
        try await proxy.stop()
    }

    @Test func httpsGoesThroughCONNECT() async throws {
        try await TestPKI.withScratchCA { pki in
            let nginx = try await Nginx.startTLS(pki: pki, server: "location / { return 204; }")
            let proxy = try await Tinyproxy.start()
            let environment = ["HTTPS_PROXY": proxy.url, "NO_PROXY": "example.com"]
            let error = await call("https://localhost:\(nginx.port)", environment: environment, proxiesLoopback: true) {
                $0.tls.caFile = pki.caFile
            }
            #expect(error == nil)
            #expect(proxy.requests.contains { $0.hasPrefix("CONNECT localhost:\(nginx.port)") }, "\(proxy.requests)")
            #expect(await nginx.requestCount(reaching: 1) == 1)
            try await proxy.stop()
            try await nginx.stop()
        }
    }

    @Test func theProxysCredentialComesFromTheStorageAndIsNeverLogged() async throws {
        let secret = "proxy-SECRET-\(UInt32.random(in: 0...UInt32.max))"
        let proxy = try await Tinyproxy.start(basicAuth: ("app", secret))
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/x", .status(.noContent))
            let refused = await call(server.baseURL.absoluteString + "/v1", environment: ["http_proxy": proxy.url], proxiesLoopback: true)
            #expect(refused?.kind == .authentication)
            #expect(refused?.description.contains("http.proxyCredentialService") == true)
            #expect(server.requests.isEmpty)
            // With the credential, the proxy carries the call.
            let basicValue = "Basic " + Data("app:\(secret)".utf8).base64EncodedString()
            let carried = await call(
                server.baseURL.absoluteString + "/v1", environment: ["http_proxy": proxy.url], proxyAuthorization: basicValue, proxiesLoopback: true
            )
            #expect(carried == nil)
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.headerFields[.proxyAuthorization] == nil)

            // The live path: the credential looked up once in the configured storage.
            var config = APIConfig(baseURL: server.baseURL.appendingPathComponent("v1"), service: "s")
            config.logging.level = .trace
            config.http.proxyCredentialService = "egress-proxy"
            let basic = "Basic " + Data("app:\(secret)".utf8).base64EncodedString()
            let storage = InMemoryAuthenticationStorage(["s": "Bearer upstream-token", "egress-proxy": basic])
            let transport = try await APIDependencies.transport(for: config, storage: storage, environment: ["http_proxy": proxy.url])
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "test") { _ in logs }
            logger.logLevel = .trace
            let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport, logger: logger))
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            try await transport.shutdown()
            // A loopback target: direct, the proxy's credential sent nowhere.
            #expect(server.requests.count == 2)
            #expect(server.requests.allSatisfy { $0.headerFields[.proxyAuthorization] == nil })
            #expect(!logs.entries.contains { "\($0)".contains(secret) || "\($0)".contains(basic) })

            // No credential stored under the service: the dependencies are refused, naming it.
            let missing = await #expect(throws: APIError.self) {
                _ = try await APIDependencies.transport(for: config, storage: InMemoryAuthenticationStorage(), environment: [:])
            }
            #expect(missing?.kind == .authentication)
            #expect(missing?.description.contains("egress-proxy") == true)
        }
        try await proxy.stop()
    }

    /// What tinyproxy was asked to carry shows the route: a target `NO_PROXY` names never reaches
    /// it, even where going direct then fails (nothing listens on `[::1]`, `localhost.` does not
    /// resolve here).
    @Test(arguments: [
        ("http://[::1]:{port}/v1", "[::1]:{port}"),
        ("http://[::1]:{port}/v1", "[::1]"),
        ("http://[::1]:{port}/v1", "::1"),
        ("http://localhost.:{port}/v1", "localhost"),
        ("http://localhost:{port}/v1", "localhost."),
        ("http://LocalHost:{port}/v1", ".localhost:{port}"),
    ])
    func noProxyFormsKeepTheTargetAwayFromTheProxy(target: String, noProxy: String) async throws {
        let proxy = try await Tinyproxy.start()
        let port = try Nginx.freePort()
        let url = target.replacingOccurrences(of: "{port}", with: "\(port)")
        let entry = noProxy.replacingOccurrences(of: "{port}", with: "\(port)")
        _ = await call(url, environment: ["http_proxy": proxy.url, "no_proxy": "other.test, \(entry)"], proxiesLoopback: true)
        #expect(!proxy.requests.contains { $0.contains(":\(port)") }, "\(proxy.requests)")
        // Without the entry, the same call reaches the proxy: the check above can see a proxied call.
        _ = await call(url, environment: ["http_proxy": proxy.url, "no_proxy": "other.test"], proxiesLoopback: true)
        #expect(proxy.requests.contains { $0.contains(":\(port)") }, "\(proxy.requests)")
        try await proxy.stop()
    }

    @Test func aProxyURLWithAPasswordIsRefusedWithoutRepeatingIt() async throws {
        try await MockServer.withRunning { server in
            let error = await call(server.baseURL.absoluteString, environment: ["http_proxy": "http://user:hunter2@127.0.0.1:9"])
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("hunter2") == false)
            #expect(server.requests.isEmpty)
        }
        var config = APIConfig(baseURL: URL(string: "https://api.example.com")!, service: "s")
        config.http.proxy = .url(URL(string: "http://user:hunter2@proxy.internal:3128")!)
        let problem = try #require(config.validationError())
        #expect(problem.kind == .invalidConfiguration)
        #expect(!problem.description.contains("hunter2"))
    }
}

/// `NO_PROXY` and the variables, the rules curl follows.
@Suite struct ProxyRouteTests {
    private let proxy = URL(string: "http://proxy.internal:3128")!

    @Test(arguments: [
        // Host names: the name and names under it, on a label boundary; case does not matter.
        ("example.com", "https://example.com/x", true),
        ("example.com", "https://api.example.com/x", true),
        ("example.com", "https://notexample.com/x", false),
        ("example.com", "https://example.com.evil.test/x", false),
        (".example.com", "https://api.example.com/x", true),
        (".example.com", "https://example.com/x", true),
        ("*.example.com", "https://api.example.com/x", true),
        ("EXAMPLE.com", "https://Api.Example.COM/x", true),
        // A trailing dot on either side is ignored.
        ("localhost", "http://localhost./x", true),
        ("localhost.", "http://localhost/x", true),
        ("example.com.", "https://api.example.com./x", true),
        // A port suffix limits the entry to that port (the scheme's default when none is written).
        ("example.com:8443", "https://example.com:8443/x", true),
        ("example.com:8443", "https://example.com/x", false),
        ("example.com:443", "https://example.com/x", true),
        ("192.168.1.7:8080", "http://192.168.1.7:8080/x", true),
        ("192.168.1.7:8080", "http://192.168.1.7:8081/x", false),
        // Addresses and CIDR blocks, IPv6 with or without brackets, with or without a port.
        ("10.0.0.0/8", "https://10.1.2.3/x", true),
        ("10.0.0.0/8", "https://11.1.2.3/x", false),
        ("192.168.1.7", "https://192.168.1.7/x", true),
        ("::1", "https://[::1]:8443/x", true),
        ("[::1]", "https://[::1]:8443/x", true),
        ("[::1]:18443", "http://[::1]:18443/x", true),
        ("[::1]:18443", "http://[::1]:18444/x", false),
        ("[0:0::1]:18443", "http://[::1]:18443/x", true),
        ("fd00::/8", "https://[fd12::1]/x", true),
        ("[fd00::]/8", "https://[fd12::1]/x", true),
        ("fd00::/8", "https://[fe12::1]/x", false),
        // An address entry matches addresses only; a name entry, names only.
        ("0.1", "https://10.0.0.1/x", false),
        ("127.0.0.1", "http://localhost/x", false),
        // Whitespace around entries; `*` alone; entries of no known form are ignored.
        ("  example.com\t", "https://example.com/x", true),
        ("*", "https://anything.example/x", true),
        ("", "https://example.com/x", false),
        ("example.com:99999", "https://example.com/x", false),
        ("10.0.0.0/33", "https://10.1.2.3/x", false),
        ("[::1", "http://[::1]/x", false),
        ("exa mple.com", "https://mple.com/x", false),
    ])
    func noProxy(entry: String, target: String, bypassed: Bool) {
        for scheme in ["https", "http"] {
            // Loopback targets go direct whatever `NO_PROXY` says: the entries are read as if not.
            var route = ProxyRoute(
                .environment,
                environment: ["https_proxy": proxy.absoluteString, "http_proxy": proxy.absoluteString, "no_proxy": "other.test, \(entry)"]
            )
            route.loopbackGoesDirect = false
            let url = URL(string: target.replacingOccurrences(of: "https://", with: "\(scheme)://"))!
            let defaultPort = url.port == nil && entry.hasSuffix(":443") && scheme == "http"
            #expect((route.proxy(for: url) == nil) == (bypassed && !defaultPort), "\(entry) / \(url)")
        }
    }

    @Test(arguments: [
        "http://localhost/x", "http://LocalHost:8080/x",
        "http://127.0.0.1/x", "https://127.0.0.1:8443/x", "http://127.255.0.9/x", "http://127.1/x", "http://2130706433/x",
        "http://0x7f000001/x", "http://[::1]:8080/x", "https://[0:0:0:0:0:0:0:1]/x", "http://[::ffff:127.0.0.1]/x",
    ])
    func loopbackTargetsGoDirect(target: String) {
        let url = URL(string: target)!
        for environment in [
            ["https_proxy": proxy.absoluteString, "http_proxy": proxy.absoluteString],
            ["HTTPS_PROXY": proxy.absoluteString, "http_proxy": proxy.absoluteString, "no_proxy": "other.test"],
        ] {
            #expect(ProxyRoute(.environment, environment: environment).proxy(for: url) == nil, "\(target)")
        }
        #expect(ProxyRoute(.url(proxy), environment: [:]).proxy(for: url) == nil, "\(target)")
    }

    /// A name under `localhost`, or `localhost.`, is resolved by the system's resolver, which may
    /// ask DNS: it is not taken for this machine, and goes through the proxy as any name does.
    @Test(arguments: ["http://api.localhost/x", "https://localhost./x", "http://LOCALHOST./x", "http://a.b.localhost:8080/x"])
    func namesTheResolverMayAskDNSForAreNotLoopback(target: String) {
        let url = URL(string: target)!
        #expect(ProxyRoute.Target(url)?.isLoopback == false, "\(target)")
        #expect(ProxyRoute(.environment, environment: ["https_proxy": proxy.absoluteString, "http_proxy": proxy.absoluteString]).proxy(for: url) == proxy)
    }

    /// A scoped IPv6 address (RFC 6874, `%25` then the zone) is its address on an interface: a
    /// loopback one goes direct, and a `NO_PROXY` entry matches it without the zone.
    @Test(arguments: [
        ("http://[::1%25lo]:8080/x", true), ("https://[::1%25lo]/x", true), ("http://[0:0:0:0:0:0:0:1%25eth0]/x", true),
        ("http://[::1%251]/x", true), ("http://[fe80::1%25lo]/x", false), ("http://[::2%25lo]/x", false),
    ])
    func scopedAddresses(target: String, loopback: Bool) throws {
        let url = try #require(URL(string: target))
        #expect((ProxyRoute(.url(proxy), environment: [:]).proxy(for: url) == nil) == loopback, "\(target)")
        var route = ProxyRoute(
            .environment,
            environment: ["https_proxy": proxy.absoluteString, "http_proxy": proxy.absoluteString, "no_proxy": "::1, fe80::/10"]
        )
        route.loopbackGoesDirect = false
        #expect((route.proxy(for: url) == nil) == !target.contains("::2"), "\(target)")
    }

    @Test(arguments: [
        "http://localhost.example.com/x", "http://notlocalhost/x", "http://localhostx/x", "http://127.0.0.1.example.com/x",
        "http://128.0.0.1/x", "http://10.0.0.1/x", "http://[::2]/x", "http://[::ffff:10.0.0.1]/x", "https://api.example.com/x",
    ])
    func otherTargetsStillGoThroughTheProxy(target: String) {
        #expect(ProxyRoute(.url(proxy), environment: [:]).proxy(for: URL(string: target)!) == proxy, "\(target)")
    }

    @Test func lowerCaseWinsAndUpperCaseHTTPProxyIsNeverRead() {
        let route = ProxyRoute(
            .environment,
            environment: ["HTTPS_PROXY": "http://upper:1", "https_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:2", "NO_PROXY": "b.example"]
        )
        #expect(route.proxy(for: URL(string: "https://a.example")!)?.host == "lower")
        #expect(route.proxy(for: URL(string: "https://b.example")!) == nil)
        #expect(route.proxy(for: URL(string: "http://a.example")!) == nil)
        let upper = ProxyRoute(.environment, environment: ["HTTPS_PROXY": "http://upper:1", "http_proxy": "proxy.internal:3128"])
        #expect(upper.proxy(for: URL(string: "https://a.example")!)?.host == "upper")
        #expect(upper.proxy(for: URL(string: "http://a.example")!) == URL(string: "http://proxy.internal:3128"))
        // A lower-case variable that is set but empty means none; its upper-case form is not read.
        let empty = ProxyRoute(
            .environment,
            environment: ["https_proxy": "", "HTTPS_PROXY": "http://upper:1", "no_proxy": "", "NO_PROXY": "*"]
        )
        #expect(empty.proxy(for: URL(string: "https://a.example")!) == nil)
        let noExceptions = ProxyRoute(.environment, environment: ["https_proxy": "http://lower:1", "no_proxy": "", "NO_PROXY": "*"])
        #expect(noExceptions.proxy(for: URL(string: "https://a.example")!)?.host == "lower")
        #expect(ProxyRoute(.none, environment: ["https_proxy": "http://lower:1"]).proxy(for: URL(string: "https://a.example")!) == nil)
    }
}
