import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// A socket listening on another loopback address (`127.0.0.2`), never accepting: whatever
/// connects to it is seen afterwards, without a server that answers.
final class OtherHostListener: Sendable {
    let descriptor: Int32
    let port: Int

    init(address: String = "127.0.0.2") throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = 0
        inet_pton(AF_INET, address, &socketAddress.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &socketAddress) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        let named = withUnsafeMutablePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: socketAddress.sin_port))
    }

    /// Whether anything connected (the kernel queues the connection until it is accepted).
    var wasReached: Bool {
        let connection = accept(descriptor, nil, nil)
        guard connection >= 0 else { return false }
        close(connection)
        return true
    }

    deinit { close(descriptor) }
}

/// A transport that reaches `https://idp.test:PORT` at the mock server's plain http address: the
/// issuer is https as far as the library can tell, and every request still reaches a real server.
struct HTTPSIssuerTransport: HTTPTransport {
    let inner: any HTTPTransport
    let port: Int

    var origin: String { "https://idp.test:\(port)" }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        var request = request
        if request.url.hasPrefix(origin) {
            request.url = "http://127.0.0.1:\(port)" + request.url.dropFirst(origin.count)
        }
        return try await inner.send(request)
    }
}

/// Discovered metadata cannot send the client's credentials to another host, nor from an https
/// issuer over plain http; the user's own endpoint settings are their choice.
@Suite struct MetadataEndpointTrustTests {
    /// Serves `server`'s metadata for `issuer` with `endpoints` (key → URL), and a token.
    static func serve(_ server: MockServer, issuer: String, _ endpoints: [String: String]) throws {
        var metadata = endpoints
        metadata["issuer"] = issuer
        server.stub(.get, "/.well-known/oauth-authorization-server", .json(raw: try JSONSerialization.data(withJSONObject: metadata)))
        server.stub(.post, "/token", .json(raw: #"{"access_token": "tok-meta-1", "token_type": "Bearer", "expires_in": 600}"#))
    }

    static func storage(_ settings: OAuth2Settings, transport: any HTTPTransport) async throws -> OAuth2AuthenticationStorage {
        try await OAuth2AuthenticationStorage(settings: settings, transport: transport, clientSecret: InMemorySecrets(["svc-client-secret": "metadata-secret-4d1"]))
    }

    @Test(arguments: ["token_endpoint", "device_authorization_endpoint", "revocation_endpoint"])
    func anEndpointOnAnotherHostGetsNothing(_ key: String) async throws {
        let other = try OtherHostListener()
        try await MockServer.withTransport { server, transport in
            let issuer = server.baseURL.absoluteString
            var endpoints = ["token_endpoint": "\(issuer)/token", "device_authorization_endpoint": "\(issuer)/device", "revocation_endpoint": "\(issuer)/revoke"]
            endpoints[key] = "http://127.0.0.2:\(other.port)/\(key)"
            try Self.serve(server, issuer: issuer, endpoints)
            let storage = try await Self.storage(OAuth2Settings(clientID: "svc", issuer: server.baseURL), transport: transport)
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(error?.kind == .invalidResponse)
            #expect(error?.detail.contains(key) == true, "\(error.map { "\($0)" } ?? "")")
            #expect(!server.requests.contains { $0.method == .post }, "a credential was sent")
            #expect(!other.wasReached, "the other host was reached")
        }
    }

    @Test func anEndpointOnAnotherPortOfTheIssuersHostGetsNothing() async throws {
        let other = try OtherHostListener(address: "127.0.0.1")
        try await MockServer.withTransport { server, transport in
            let issuer = server.baseURL.absoluteString
            try Self.serve(server, issuer: issuer, ["token_endpoint": "http://127.0.0.1:\(other.port)/token"])
            let storage = try await Self.storage(OAuth2Settings(clientID: "svc", issuer: server.baseURL), transport: transport)
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(error?.detail.contains("token_endpoint") == true)
            #expect(!other.wasReached, "the other port was reached")
        }
    }

    @Test func aConfiguredTokenEndpointIsTheUsersChoice() async throws {
        let other = try OtherHostListener()
        try await MockServer.withTransport { server, transport in
            let issuer = server.baseURL.absoluteString
            try Self.serve(server, issuer: issuer, ["token_endpoint": "http://127.0.0.2:\(other.port)/token"])
            var settings = OAuth2Settings(clientID: "svc", issuer: server.baseURL)
            settings.tokenEndpoint = server.baseURL.appendingPathComponent("token")
            let storage = try await Self.storage(settings, transport: transport)
            let header = try await storage.authenticationHeader(for: "s")
            #expect(header == "Bearer tok-meta-1")
            #expect(!other.wasReached)
        }
    }

    @Test(arguments: ["token_endpoint", "authorization_endpoint", "revocation_endpoint"])
    func anHTTPSIssuersEndpointsArePlainHTTPNowhere(_ key: String) async throws {
        try await MockServer.withTransport { server, transport in
            let https = HTTPSIssuerTransport(inner: transport, port: server.port)
            var endpoints = ["token_endpoint": "\(https.origin)/token", "authorization_endpoint": "\(https.origin)/authorize", "revocation_endpoint": "\(https.origin)/revoke"]
            // Plain http on the very port the issuer's name leads to.
            endpoints[key] = "http://127.0.0.1:\(server.port)/\(key)"
            try Self.serve(server, issuer: https.origin, endpoints)
            let storage = try await Self.storage(OAuth2Settings(clientID: "svc", issuer: URL(string: https.origin)), transport: https)
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            #expect(error?.kind == .invalidResponse)
            #expect(error?.detail.contains(key) == true, "\(error.map { "\($0)" } ?? "")")
            #expect(!server.requests.contains { $0.method == .post }, "a credential was sent")
        }
    }

    @Test func anHTTPSIssuerWithItsOwnEndpointsIsUsed() async throws {
        try await MockServer.withTransport { server, transport in
            let https = HTTPSIssuerTransport(inner: transport, port: server.port)
            try Self.serve(server, issuer: https.origin, ["token_endpoint": "\(https.origin)/token", "revocation_endpoint": "\(https.origin)/revoke"])
            let storage = try await Self.storage(OAuth2Settings(clientID: "svc", issuer: URL(string: https.origin)), transport: https)
            #expect(try await storage.authenticationHeader(for: "s") == "Bearer tok-meta-1")
        }
    }

    /// The browser login's address, when the metadata names it, is checked as a device login's
    /// is, before anyone is asked to open it.
    @Test(arguments: [
        "/authorize%E2%80%AEnigol", "/authorize%E3%85%A4", "/authorize%E2%80%A8x", "/authorize%C2%A0x",
    ])
    func aDiscoveredAuthorizationAddressThatHidesTextIsNotOpened(_ path: String) async throws {
        try await MockServer.withTransport { server, transport in
            let issuer = server.baseURL.absoluteString
            try Self.serve(server, issuer: issuer, ["token_endpoint": "\(issuer)/token", "authorization_endpoint": "\(issuer)\(path)"])
            let settings = OAuth2Settings(clientID: "native", issuer: server.baseURL, clientAuthentication: .none, grant: .refreshToken)
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            struct Opened: Error {}
            let opened = Locked(false)
            let error = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: "s", timeout: .seconds(30)) { _ in
                    opened.withLock { $0 = true }
                    throw Opened()
                }
            }
            #expect(!opened.withLock { $0 }, "the address was handed to the browser")
            #expect(error?.kind == .invalidResponse)
            #expect(error?.detail.contains("authorization_endpoint") == true)
        }
    }
}
