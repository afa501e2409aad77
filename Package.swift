// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "Resourceful",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Resourceful", targets: ["Resourceful"]),
        .library(name: "ResourcefulTesting", targets: ["ResourcefulTesting"]),
        .library(name: "ResourcefulKeyring", targets: ["ResourcefulKeyring"]),
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
    ],
    targets: [
        .target(
            name: "Resourceful",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
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
        .target(
            name: "ResourcefulTesting",
            dependencies: [
                "Resourceful",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "resourceful",
            dependencies: [
                "Resourceful",
                "ResourcefulKeyring",
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
                "ResourcefulTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "ResourcefulKeyringTests",
            dependencies: [
                "Resourceful",
                "ResourcefulKeyring",
                "ResourcefulTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "ResourcefulTestingTests",
            dependencies: [
                "Resourceful",
                "ResourcefulTesting",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ]
)

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
