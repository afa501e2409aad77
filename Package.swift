// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "Resourceful",
    // Resourceful runs and is tested on Linux; macOS 15 is named so that Apple's tools resolve it.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Resourceful", targets: ["Resourceful", "ResourcefulJSON"]),
        .library(name: "ResourcefulTesting", targets: ["ResourcefulTesting"]),
        .library(name: "ResourcefulKeyring", targets: ["ResourcefulKeyring"]),
        .library(name: "ResourcefulOAuth2", targets: ["ResourcefulOAuth2"]),
        .library(name: "ResourcefulServiceLifecycle", targets: ["ResourcefulServiceLifecycle"]),
        .library(name: "ResourcefulCombine", targets: ["ResourcefulCombine"]),
        .executable(name: "resourceful", targets: ["resourceful"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        // Only a test target uses it: a package that depends on Resourceful does not fetch it (SwiftPM
        // resolves test targets' dependencies for the root package alone).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
    ],
    targets: [
        // The fast JSON decoder: Foundation alone, built and tested on its own.
        .target(name: "ResourcefulJSON", dependencies: ["CResourcefulSIMD"]),
        // The one vector instruction Swift's SIMD types do not reach (a move mask), for its stage one.
        .target(name: "CResourcefulSIMD"),
        .testTarget(
            name: "ResourcefulJSONTests",
            dependencies: [
                "ResourcefulJSON",
                "ResourcefulTesting",
                "ProcessTestSupport",
            ]
        ),
        .target(
            name: "Resourceful",
            dependencies: [
                "ResourcefulJSON",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "ResourcefulKeyring",
            dependencies: [
                "Resourceful",
                "CLibSecret",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // OAuth 2 credentials: grants, discovery, token lifecycle; JWTKit signs client assertions.
        .target(
            name: "ResourcefulOAuth2",
            dependencies: [
                "Resourceful",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "ResourcefulOAuth2Tests",
            dependencies: [
                "resourceful",
                "Resourceful",
                "ResourcefulOAuth2",
                "ResourcefulKeyring",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(
            name: "ResourcefulServiceLifecycle",
            dependencies: [
                "Resourceful",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "ResourcefulCombine",
            dependencies: [
                "Resourceful",
                .product(name: "OpenCombineShim", package: "OpenCombine"),
            ]
        ),
        .target(
            name: "ResourcefulTesting",
            dependencies: [
                "Resourceful",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]
        ),
        .executableTarget(
            name: "resourceful",
            dependencies: [
                "Resourceful",
                "ResourcefulKeyring",
                "ResourcefulOAuth2",
                "ResourcefulTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "ResourcefulTests",
            dependencies: [
                "Resourceful",
                "ResourcefulJSON",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .target(
            name: "ProcessTestSupport",
            path: "Tests/Support/ProcessTestSupport"
        ),
        .testTarget(
            name: "resourcefulTests",
            dependencies: [
                "resourceful",
                "Resourceful",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulKeyringTests",
            dependencies: [
                "resourceful",
                "ProcessTestSupport",
                "Resourceful",
                "ResourcefulKeyring",
                "ResourcefulTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulServiceLifecycleTests",
            dependencies: [
                "Resourceful",
                "ResourcefulServiceLifecycle",
                "ResourcefulTesting",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulCombineTests",
            dependencies: [
                "Resourceful",
                "ResourcefulCombine",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "OpenCombineShim", package: "OpenCombine"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulTestingTests",
            dependencies: [
                "Resourceful",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            // The README's cassette, read by its test from the source tree.
            exclude: ["Recording/Cassettes"]
        ),
    ]
)

// State shared by a fleet through PostgreSQL: its own product, so that the core never links
// postgres-nio. The thread-sanitizer run (`make test-tsan`) sets RESOURCEFUL_WITHOUT_POSTGRES: it
// tests the core and testing modules, and would only build the PostgreSQL client again.
if Context.environment["RESOURCEFUL_WITHOUT_POSTGRES"] == nil {
    package.products += [
        .library(name: "ResourcefulPostgres", targets: ["ResourcefulPostgres"])
    ]
    package.dependencies += [
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2")
    ]
    package.targets += [
        .target(
            name: "ResourcefulPostgres",
            dependencies: [
                "Resourceful",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Schema.sql"]
        ),
        // A process of a fleet, for the tests: calls an upstream through state shared in PostgreSQL.
        .executableTarget(
            name: "resourceful-fleet-worker",
            dependencies: [
                "Resourceful",
                "ResourcefulOAuth2",
                "ResourcefulPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/FleetWorker"
        ),
        .testTarget(
            name: "ResourcefulPostgresTests",
            dependencies: [
                "Resourceful",
                "ResourcefulOAuth2",
                "ResourcefulPostgres",
                "ResourcefulTesting",
                "ProcessTestSupport",
                "resourceful-fleet-worker",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ]
}

// The containers apps already run: swift-dependencies (`DependencyValues.api`) and Swinject (an
// `Assembly`), each its own product, so that an app that uses neither builds neither. Only
// swift-dependencies' `Dependencies` library is used: its macros, and swift-syntax with them, are
// never built. The thread-sanitizer run sets RESOURCEFUL_WITHOUT_CONTAINERS: it tests the core.
if Context.environment["RESOURCEFUL_WITHOUT_CONTAINERS"] == nil {
    package.products += [
        .library(name: "ResourcefulDependencies", targets: ["ResourcefulDependencies"]),
        .library(name: "ResourcefulSwinject", targets: ["ResourcefulSwinject"]),
    ]
    package.dependencies += [
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", from: "1.17.1", traits: []),
        .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay.git", from: "1.13.1"),
        .package(url: "https://github.com/Swinject/Swinject.git", from: "2.10.0"),
    ]
    package.targets += [
        .target(
            name: "ResourcefulDependencies",
            dependencies: [
                "Resourceful",
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "ResourcefulSwinject",
            dependencies: [
                "Resourceful",
                .product(name: "Swinject", package: "Swinject"),
            ]
        ),
        .testTarget(
            name: "ResourcefulDependenciesTests",
            dependencies: [
                "Resourceful",
                "ResourcefulDependencies",
                "ResourcefulServiceLifecycle",
                "ResourcefulTesting",
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
                .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
                // Lets an issue reported from the library reach Swift Testing on Linux.
                .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulSwinjectTests",
            dependencies: [
                "Resourceful",
                "ResourcefulSwinject",
                "ResourcefulTesting",
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
}

// The OpenAPI generator, its build plugin and their tests. The thread-sanitizer run
// (`make test-tsan`) sets RESOURCEFUL_WITHOUT_OPENAPI: it tests the core and testing modules, and
// would only build the document parser again. Without the generator, `resourceful` has no
// `generate` command.
if Context.environment["RESOURCEFUL_WITHOUT_OPENAPI"] == nil {
    package.products += [
        .library(name: "ResourcefulOpenAPI", targets: ["ResourcefulOpenAPI"]),
        .plugin(name: "ResourcefulOpenAPIPlugin", targets: ["ResourcefulOpenAPIPlugin"]),
    ]
    package.dependencies += [
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ]
    package.targets += [
        // The OpenAPI generator: OpenAPIKit and Yams, and nothing of the HTTP stack.
        .target(
            name: "ResourcefulOpenAPI",
            dependencies: [
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "OpenAPIKit30", package: "OpenAPIKit"),
                .product(name: "OpenAPIKitCompat", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // The build plugin's tool: the generator alone, so that a plugin user builds no keyring.
        .executableTarget(
            name: "resourceful-openapi-generator",
            dependencies: ["ResourcefulOpenAPI"]
        ),
        .plugin(
            name: "ResourcefulOpenAPIPlugin",
            capability: .buildTool(),
            dependencies: ["resourceful-openapi-generator"]
        ),
        // The generator's golden files, compiled: what `ResourcefulOpenAPITests` generates must equal
        // them byte for byte, and its runtime tests call them.
        .target(
            name: "OpenAPIGolden",
            dependencies: ["Resourceful"],
            path: "Tests/OpenAPIGolden"
        ),
        .testTarget(
            name: "ResourcefulOpenAPITests",
            dependencies: [
                "ResourcefulOpenAPI",
                "OpenAPIGolden",
                "Resourceful",
                "ResourcefulTesting",
                "ProcessTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["Specs"]
        ),
    ]
    for target in package.targets where target.name == "resourceful" {
        target.dependencies.append("ResourcefulOpenAPI")
    }
}

for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    // Require `any` for existential types (SE-0335).
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    // Imports must be visible where members are used (SE-0444).
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    // Imports are internal unless marked public (SE-0409).
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    // Warnings are errors in this package's own targets.
    settings.append(.treatAllWarnings(as: .error))
    target.swiftSettings = settings
}
