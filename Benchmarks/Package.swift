// swift-tools-version: 6.1
// keel-bench: Keel against SQLite, side by side in one run (Docs/Performance.md).
// A separate package so that SQLite is a dependency of the benchmark only, never of the product.
import PackageDescription

// The Keel side (Sources/keel-bench/KeelEngine.swift) is compiled only when the engine façade
// (`Store`) is in KeelStorage. Until then keel-bench runs the SQLite side alone and prints "—"
// in the Keel columns; it never substitutes anything for the engine.
let keelEngineAvailable = true

let package = Package(
    name: "KeelBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Keel", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // SQLite 3 from the system, found through pkg-config (apt: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite3",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .executableTarget(
            name: "keel-bench",
            dependencies: [
                .product(name: "KeelStorage", package: "Keel"),
                .product(name: "KeelModel", package: "Keel"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "CSQLite3",
            ],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
            ] + (keelEngineAvailable ? [.define("KEEL_ENGINE")] : [])
        ),
        // Fetch requests and the planner on 1M Employee objects, Keel's object layer against
        // SQLite tables with the same indexes (Docs/Performance.md, "Fetch").
        .executableTarget(
            name: "keel-fetch-bench",
            dependencies: [.product(name: "KeelModel", package: "Keel"), "CSQLite3"],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
        // INSERT + SAVE of one small Computer per save from N threads, a context each, straight on
        // an object store (Docs/Performance.md, issue 5, round savework): the object layer's CPU per save.
        .executableTarget(
            name: "keel-save-bench",
            dependencies: [.product(name: "KeelModel", package: "Keel"), .product(name: "KeelStorage", package: "Keel")],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
        // GET by ID round trips through KeelConnection against raw protocol lines on a plain
        // socket, one connection (Docs/Performance.md, "Client"); scripts/bench-client.sh runs it.
        .executableTarget(
            name: "keel-client-bench",
            dependencies: [
                .product(name: "KeelClient", package: "Keel"), .product(name: "KeelModel", package: "Keel"),
                .product(name: "KeelTestSupport", package: "Keel"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6), .enableUpcomingFeature("ExistentialAny")]
        ),
    ]
)
