// swift-tools-version: 6.2

import PackageDescription

// The server examples and the OpenAPI examples, in one package so that SwiftNIO and friends are
// built once for all of them. `make examples` fetches `openapi-client/Sources/ItemsClient/openapi.json`
// from the FastAPI app and generates `openapi-fixtures/Generated/` before building.
let package = Package(
    name: "ResourcefulExamples",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hummingbird-app", targets: ["HummingbirdAppRun"]),
        .executable(name: "vapor-app", targets: ["VaporAppRun"]),
    ],
    dependencies: [
        .package(name: "Resourceful", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", from: "1.17.1", traits: []),
    ],
    targets: [
        .target(
            name: "UpstreamUsers",
            dependencies: [
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Shared/UpstreamUsers"
        ),
        .target(
            name: "HummingbirdApp",
            dependencies: [
                "UpstreamUsers",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulServiceLifecycle", package: "Resourceful"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "hummingbird-app/Sources/HummingbirdApp"
        ),
        .executableTarget(
            name: "HummingbirdAppRun",
            dependencies: [
                "HummingbirdApp",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulKeyring", package: "Resourceful"),
                .product(name: "ResourcefulServiceLifecycle", package: "Resourceful"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "hummingbird-app/Sources/Run"
        ),
        .testTarget(
            name: "HummingbirdAppTests",
            dependencies: [
                "HummingbirdApp",
                "UpstreamUsers",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulTesting", package: "Resourceful"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ResourcefulDependencies", package: "Resourceful"),
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "hummingbird-app/Tests/HummingbirdAppTests"
        ),
        .target(
            name: "VaporApp",
            dependencies: [
                "UpstreamUsers",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "Vapor", package: "vapor"),
            ],
            path: "vapor-app/Sources/VaporApp"
        ),
        .executableTarget(
            name: "VaporAppRun",
            dependencies: [
                "VaporApp",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulKeyring", package: "Resourceful"),
                .product(name: "Vapor", package: "vapor"),
            ],
            path: "vapor-app/Sources/Run"
        ),
        // A client generated at build time by the plugin from the FastAPI app's own document.
        .target(
            name: "ItemsClient",
            dependencies: [.product(name: "Resourceful", package: "Resourceful")],
            path: "openapi-client/Sources/ItemsClient",
            plugins: [.plugin(name: "ResourcefulOpenAPIPlugin", package: "Resourceful")]
        ),
        .testTarget(
            name: "ItemsClientTests",
            dependencies: [
                "ItemsClient",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "openapi-client/Tests/ItemsClientTests"
        ),
        // The public documents in ../Tests/Fixtures/openapi, generated by `resourceful generate`
        // (one namespace each) and compiled with warnings as errors.
        .target(
            name: "OpenAPIFixtures",
            dependencies: [.product(name: "Resourceful", package: "Resourceful")],
            path: "openapi-fixtures/Generated"
        ),
        .testTarget(
            name: "OpenAPIFixturesTests",
            dependencies: [
                "OpenAPIFixtures",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulTesting", package: "Resourceful"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "openapi-fixtures/Tests/OpenAPIFixturesTests"
        ),
        .testTarget(
            name: "VaporAppTests",
            dependencies: [
                "VaporApp",
                "UpstreamUsers",
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulTesting", package: "Resourceful"),
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "ResourcefulDependencies", package: "Resourceful"),
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "vapor-app/Tests/VaporAppTests"
        ),
    ]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
