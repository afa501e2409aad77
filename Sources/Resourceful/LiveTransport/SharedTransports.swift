import Synchronization

/// The live transports of the configuration files loaded in this process: the APIs loaded from one
/// file share one client (one pool of connections) for as long as any of them is running, and
/// services whose HTTP settings differ (another CA, another proxy) get one each.
///
/// Each ``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
/// takes a share, a ``Lease``; its `shutdown()` gives the share back, and the last one shuts the
/// client down.
enum SharedTransports {
    /// What makes two transports interchangeable.
    struct Key: Equatable {
        var file: String
        var settings: APIConfig.HTTPSettings
        var proxyAuthorization: String?
        var environment: [String: String]
    }

    private struct Entry {
        var key: Key
        var transport: AsyncHTTPClientTransport
        var leases: Int
    }

    private static let entries = Locked<[Entry]>([])

    /// A share of the transport for `key`, made by `make` if none is running.
    static func lease(_ key: Key, make: () -> AsyncHTTPClientTransport) -> Lease {
        let transport = entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.key == key }) {
                entries[index].leases += 1
                return entries[index].transport
            }
            let transport = make()
            entries.append(Entry(key: key, transport: transport, leases: 1))
            return transport
        }
        return Lease(transport: transport)
    }

    /// Gives one share of `transport` back; whether it was the last.
    fileprivate static func release(_ transport: AsyncHTTPClientTransport) -> Bool {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.transport === transport }) else { return false }
            entries[index].leases -= 1
            guard entries[index].leases == 0 else { return false }
            entries.remove(at: index)
            return true
        }
    }

    /// One API's share of a shared transport.
    final class Lease: HTTPTransport {
        /// The transport shared.
        let transport: AsyncHTTPClientTransport
        private let released = Atomic<Bool>(false)

        fileprivate init(transport: AsyncHTTPClientTransport) {
            self.transport = transport
        }

        deinit {
            // A share dropped without `shutdown()` is given back all the same; when it was the
            // last, the transport, no longer held, releases its client as it goes.
            if !released.load(ordering: .acquiring) { _ = SharedTransports.release(transport) }
        }

        func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            guard !released.load(ordering: .acquiring) else {
                throw TransportError.connectionFailed(AsyncHTTPClientTransport.ShutDownError())
            }
            return try await transport.send(request)
        }

        /// Gives this share back; the last share shuts the client down.
        func shutdown() async throws {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            if SharedTransports.release(transport) { try await transport.shutdown() }
        }
    }
}
