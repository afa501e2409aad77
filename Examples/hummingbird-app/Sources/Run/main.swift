import Foundation
import HummingbirdApp
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulServiceLifecycle
import ServiceLifecycle
import UnixSignals

// One API per upstream for the whole app, from Configs/<RESOURCEFUL_ENV>.json: the users API at the
// top level, the billing service under `services.billing`. Both share one HTTP client. Credentials
// come from the chain that file names (mounted secret files, then environment variables, in
// production; the keyring, then environment variables, in development).
let environment = ProcessInfo.processInfo.environment["RESOURCEFUL_ENV"] ?? "development"
let api = API(dependencies: try await APIDependencies.live(environment: environment, keyring: Keyring()))
let billing = API(dependencies: try await APIDependencies.live(environment: environment, keyring: Keyring(), service: "billing"))
let app = buildApplication(api: api, billing: billing)

// The API's client is shut down after the server has stopped taking requests: the group stops
// services in reverse order.
let group = ServiceGroup(
    services: [APIService(api: api), APIService(api: billing), app],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: Logger(label: "hummingbird-app")
)
try await group.run()
