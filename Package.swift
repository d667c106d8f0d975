// swift-tools-version: 6.1
// Keel: Core Data's programming model on Linux, on its own storage engine.
// Layers (Docs/Architecture.md): CLZ4 / CKeelSupport → KeelStorage → (KeelModel → KeelProtocol → KeelServer / KeelClient).
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Keel",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KeelStorage", targets: ["KeelStorage"]),
        .library(name: "KeelModel", targets: ["KeelModel"]),
        .library(name: "KeelProtocol", targets: ["KeelProtocol"]),
        .library(name: "KeelServer", targets: ["KeelServer"]),
        .library(name: "KeelClient", targets: ["KeelClient"]),
        .library(name: "KeelCodegen", targets: ["KeelCodegen"]),
        .executable(name: "keeld", targets: ["keeld"]),
        .executable(name: "keelctl", targets: ["keelctl"]),
        .executable(name: "keel-example", targets: ["keel-example"]),
        // For the integration tests and the client benchmark: a real keeld on a temporary
        // socket, and a raw line client. Not part of the product an application uses.
        .library(name: "KeelTestSupport", targets: ["KeelTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // liblz4 from the system, found through pkg-config (apt: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"])]
        ),
        // Small C helpers the engine needs at hardware speed: CRC32C (SSE4.2 with a portable fallback).
        .target(name: "CKeelSupport"),
        .target(
            name: "KeelStorage",
            dependencies: ["CLZ4", "CKeelSupport", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "KeelStorageTests",
            dependencies: ["KeelStorage"],
            swiftSettings: strict
        ),
        // The object layer: model files, values and rows, the object store, contexts.
        .target(
            name: "KeelModel",
            dependencies: [
                "KeelStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Collections", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // The line protocol: request and reply lines, framing, the command table, and the direct
        // socket writes client and daemon share (SocketWriter).
        .target(
            name: "KeelProtocol",
            dependencies: [
                "KeelModel",
                "KeelStorage",
                .product(name: "Collections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                // ByteBuffer and SocketAddress, for SocketWriter (shared by client and daemon).
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "KeelProtocolTests",
            dependencies: [
                "KeelProtocol", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "KeelModelTests",
            dependencies: ["KeelModel"],
            swiftSettings: strict
        ),
            // The daemon's library: NIO on a Unix socket, sessions, peer credentials, limits, lifecycle.
        .target(
            name: "KeelServer",
            dependencies: [
                "KeelProtocol",
                "KeelModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Collections", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // keeld: a thin @main over KeelServer (flags, configuration, the service group).
        .executableTarget(
            name: "keeld",
            dependencies: [
                "KeelServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // The Swift client library: a pipelined connection to keeld, contexts, streams, and the
        // typed entity layer that works the same embedded (KeelModel) or over the socket.
        .target(
            name: "KeelClient",
            dependencies: [
                "KeelModel",
                "KeelProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Collections", package: "swift-collections"),
            ],
            swiftSettings: strict
        ),
        // `keelctl codegen`: a model → one Swift file per entity for the typed client API.
        .target(
            name: "KeelCodegen",
            dependencies: ["KeelModel"],
            swiftSettings: strict
        ),
        // keelctl: the admin tool (spec/cli.md), offline on a data folder or online through
        // keeld, and `codegen`.
        .executableTarget(
            name: "keelctl",
            dependencies: [
                "KeelClient",
                "KeelCodegen",
                "KeelProtocol",
                "KeelModel",
                "KeelStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // keelctl's tests run the built binary (.build/debug/keelctl) on stores made in-process.
        .testTarget(
            name: "KeelctlTests",
            dependencies: ["KeelModel", "KeelStorage", "KeelProtocol", "KeelTestSupport"],
            swiftSettings: strict
        ),
        // The code `keelctl codegen` makes from config/model.json: the sample entities that
        // keel-example and the client tests use (a test regenerates it and compares).
        .target(
            name: "KeelSampleModel",
            dependencies: ["KeelClient"],
            swiftSettings: strict
        ),
        // The classic Core Data tutorial flows on the sample model, against keeld or embedded.
        .executableTarget(
            name: "keel-example",
            dependencies: [
                "KeelClient",
                "KeelSampleModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        // What `keelctl codegen` makes from Tests/KeelCodegenTests/Models/golden.json (every
        // attribute type with a default, inheritance three deep, keyword names): compiled in the
        // test build, compared byte for byte by KeelCodegenTests.
        .target(
            name: "KeelCodegenFixture",
            dependencies: ["KeelClient"],
            path: "Tests/KeelCodegenFixture",
            swiftSettings: strict
        ),
        .testTarget(
            name: "KeelCodegenTests",
            dependencies: ["KeelCodegen", "KeelModel", "KeelClient", "KeelCodegenFixture"],
            exclude: ["Models"],
            swiftSettings: strict
        ),
        // What every integration suite shares: the real keeld binary started on a temporary
        // socket (Keeld), a raw line client (LineClient), writer threads (LoadClients). A regular
        // target so that several test targets can use one copy.
        .target(
            name: "KeelTestSupport",
            dependencies: ["KeelModel", "KeelProtocol"],
            path: "Tests/KeelTestSupport",
            swiftSettings: strict
        ),
        // Integration tests: the real keeld binary on a temporary socket.
        .testTarget(
            name: "KeelServerTests",
            dependencies: [
                "KeelServer", "KeelProtocol", "KeelTestSupport",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The client against a live keeld: the connection, streams, deadlines, the remote context.
        .testTarget(
            name: "KeelClientTests",
            dependencies: [
                "KeelClient", "KeelModel", "KeelProtocol", "KeelTestSupport", "KeelSampleModel",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ]
)
