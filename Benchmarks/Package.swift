// swift-tools-version: 6.1

import PackageDescription

// Benchmarks of Resourceful against raw AsyncHTTPClient and URLSession, measured in one run.
// Run with `make bench` from the repository root.
let package = Package(
    name: "ResourcefulBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        // Downloads, uploads and event streams, one per process (`scripts/bench-streaming.py`).
        .executable(name: "resourceful-bench-streaming", targets: ["StreamingBenchmarks"])
    ],
    dependencies: [
        .package(name: "Resourceful", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        .executableTarget(
            name: "ResourcefulBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "ResourcefulTesting", package: "Resourceful"),
                .product(name: "ResourcefulKeyring", package: "Resourceful"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "ResourcefulBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StreamingBenchmarks",
            dependencies: [
                .product(name: "Resourceful", package: "Resourceful"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Not directly under Benchmarks/: the benchmark plugin runs every executable target there.
            path: "Tools/StreamingBenchmarks"
        ),
    ]
)
