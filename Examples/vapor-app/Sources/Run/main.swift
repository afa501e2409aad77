import Foundation
import Logging
import Resourceful
import ResourcefulKeyring
import Vapor
import VaporApp

// One API for the whole app, from Configs/<RESOURCEFUL_ENV>.json; credentials from the chain that
// file names (mounted secret files, then environment variables, in production; the keyring, then
// environment variables, in development). Its client is shut down with the app.
var environment = try Environment.detect()
try LoggingSystem.bootstrap(from: &environment)
let app = try await Application.make(environment)
do {
    let variables = ProcessInfo.processInfo.environment
    let dependencies = try await APIDependencies.live(environment: variables["RESOURCEFUL_ENV"] ?? "development", keyring: Keyring())
    try configure(app, api: API(dependencies: dependencies))
    try await app.execute()
} catch {
    app.logger.report(error: error)
    try? await app.asyncShutdown()
    throw error
}
try await app.asyncShutdown()
