import Foundation
import Logging
import Resourceful
import ResourcefulKeyring
import Vapor
import VaporApp

// One API for the whole app, from Configs/<RESOURCEFUL_ENV>.json; credentials from the keyring
// account in RESOURCEFUL_ACCOUNT, else none. Its client is shut down with the app.
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
do {
    let variables = ProcessInfo.processInfo.environment
    var dependencies = try await APIDependencies.live(environment: variables["RESOURCEFUL_ENV"] ?? "development")
    if let account = variables["RESOURCEFUL_ACCOUNT"] {
        dependencies.authenticationStorage = KeyringAuthenticationStorage(account: account)
    }
    try configure(app, api: API(dependencies: dependencies))
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
