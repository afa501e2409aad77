import Resourceful
import Vapor

/// Configures the app: stores `api` in it, shuts its client down with the app, adds the routes.
public func configure(_ app: Application, api: API) throws {
    app.api = api
    app.lifecycle.use(APILifecycle())
    app.get("health") { _ in HTTPStatus.ok }
    try app.register(collection: UsersController())
    try app.register(collection: SessionsController())
}
