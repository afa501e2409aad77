import Foundation
import HummingbirdApp
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulServiceLifecycle
import ServiceLifecycle
import UnixSignals

// One API for the whole app, from Configs/<RESOURCEFUL_ENV>.json; credentials from the chain that
// file names (mounted secret files, then environment variables, in production; the keyring, then
// environment variables, in development).
let environment = ProcessInfo.processInfo.environment
let dependencies = try await APIDependencies.live(environment: environment["RESOURCEFUL_ENV"] ?? "development", keyring: Keyring())
let api = API(dependencies: dependencies)
let app = buildApplication(api: api)

// The API's client is shut down after the server has stopped taking requests: the group stops
// services in reverse order.
let group = ServiceGroup(
    services: [APIService(api: api), app],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: Logger(label: "hummingbird-app")
)
try await group.run()
