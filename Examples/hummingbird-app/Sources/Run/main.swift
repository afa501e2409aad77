import Foundation
import HummingbirdApp
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulServiceLifecycle
import ServiceLifecycle
import UnixSignals

// One API for the whole app, from Configs/<RESOURCEFUL_ENV>.json; credentials from the keyring
// account in RESOURCEFUL_ACCOUNT, else none.
let environment = ProcessInfo.processInfo.environment
var dependencies = try await APIDependencies.live(environment: environment["RESOURCEFUL_ENV"] ?? "development")
if let account = environment["RESOURCEFUL_ACCOUNT"] {
    dependencies.authenticationStorage = KeyringAuthenticationStorage(account: account)
}
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
