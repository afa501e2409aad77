import Resourceful
import Vapor

extension Application {
    private struct APIKey: StorageKey {
        typealias Value = API
    }

    /// The app's one `API`, set once in `configure`.
    public var api: API? {
        get { storage[APIKey.self] }
        set { storage[APIKey.self] = newValue }
    }
}

extension Request {
    /// The app's `API`, logging under this request's logger (so upstream lines carry its
    /// `request-id`).
    public var api: API {
        get throws {
            guard let api = application.api else { throw Abort(.internalServerError, reason: "the API is not configured") }
            return api.with(logger: logger)
        }
    }
}

/// Shuts the `API`'s HTTP client down when the app shuts down.
struct APILifecycle: LifecycleHandler {
    func shutdownAsync(_ application: Application) async {
        do {
            try await application.api?.shutdown()
        } catch {
            application.logger.warning("The API's HTTP client did not shut down cleanly", metadata: ["error": "\(error)"])
        }
    }
}
