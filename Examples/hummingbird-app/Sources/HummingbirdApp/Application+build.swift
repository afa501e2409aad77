import Hummingbird
import Logging
import Resourceful
import ResourcefulServiceLifecycle

/// Builds the app: its routes call the users API through `api` and the billing service through
/// `billing`, each built once at start-up and handed to the controllers that need it.
public func buildApplication(
    api: API,
    billing: API,
    configuration: ApplicationConfiguration = ApplicationConfiguration(address: .hostname("127.0.0.1", port: 8080)),
    logger: Logger = Logger(label: "hummingbird-app")
) -> some ApplicationProtocol {
    let router = Router()
    router.middlewares.add(LogRequestsMiddleware(.info))
    router.get("health") { _, _ in HTTPResponse.Status.ok }
    UsersController(api: api).addRoutes(to: router.group("users"))
    InvoicesController(billing: billing).addRoutes(to: router.group("users"))
    SessionsController(api: api).addRoutes(to: router.group("login"))
    return Application(router: router, configuration: configuration, logger: logger)
}
