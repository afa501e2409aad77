public import Dependencies

extension DependencyValues {
    /// The app's ``APIDependency``.
    ///
    /// - Live: one ``API`` made from `<folder>/<RESOURCEFUL_ENV>.json` (else `development.json`)
    ///   on first use and shared by the whole process; an app whose configuration needs storage
    ///   kinds or shared state from other modules, or its folder chosen, sets
    ///   `.live(configDirectory:storageFactories:sharedStateFactories:)` in `prepareDependencies`
    ///   where it starts. Once shut down it stays so: calls fail with
    ///   ``Resourceful/APIError/Kind/cancelled``.
    /// - Test: an ``API`` whose every call fails, naming the request and how to override this
    ///   value, and reports an issue that fails the test: a test that forgets to override it never
    ///   reaches the network.
    /// - Preview: an ``API`` that answers every call `501` with a problem naming the request.
    public var api: APIDependency {
        get { self[APIDependencyKey.self] }
        set { self[APIDependencyKey.self] = newValue }
    }
}

/// The key of ``Dependencies/DependencyValues/api``.
enum APIDependencyKey: DependencyKey {
    /// The ``API`` made from the configuration on first use.
    static let liveValue = APIDependency.live()
    /// An ``API`` that fails every call and reports the test that forgot to override it.
    static var testValue: APIDependency { APIDependency.unoverridden(.test) }
    /// An ``API`` that answers every call `501`.
    static var previewValue: APIDependency { APIDependency.unoverridden(.preview) }
}
