// swift-tools-version:6.1
// The SDK: what an iOS app adds with this repository's URL. It resolves no server dependency
// (no Hummingbird, Fluent, PostgresNIO, NIOSSL…): the server, its CLI and its tools are the package
// in `Server/`, which depends on this one by path for the shared contract (`GatehouseAPI`).
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .library(name: "GatehouseAPI", targets: ["GatehouseAPI"]),
        .library(name: "GatehouseKit", targets: ["GatehouseKit"]),
        .library(name: "GatehouseScreens", targets: ["GatehouseScreens"]),
        .library(name: "GatehouseSignature", targets: ["GatehouseSignature"]),
        // For an app's tests (and the demo), never its shipped target: reads a development server's
        // outbox, standing in for a phone and a mailbox.
        .library(name: "GatehouseDevSupport", targets: ["GatehouseDevSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        // A command plugin only (`swift package generate-documentation`): nothing of it links into an app.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The wire contract both sides import: Foundation only.
        .target(
            name: "GatehouseAPI",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseKit",
            dependencies: [
                "GatehouseAPI",
                // The messenger's offline store (SQLite; the system's libsqlite3 on Linux).
                .product(name: "GRDB", package: "GRDB.swift"),
                // Sign in with Apple's nonce (its SHA-256); CryptoKit's API on every platform.
                .product(name: "Crypto", package: "swift-crypto"),
                // URLSessionWebSocketTask needs libcurl built with WebSockets, which Linux
                // distributions do not ship: there the SDK speaks WebSocket through swift-nio's
                // own codec, behind the same protocol.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseScreens",
            dependencies: [
                "GatehouseKit", "GatehouseAPI", "GatehouseSignature",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Resources/Strings")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseDevSupport",
            dependencies: ["GatehouseKit", "GatehouseAPI"],
            swiftSettings: swiftSettings
        ),
        // Sign To Login on the device: signature capture and PDF signing by incremental update, in
        // pure Swift (no PDFKit on Linux; the same code runs on iOS and on servers). Flate through
        // compress-nio.
        .target(
            name: "GatehouseSignature",
            dependencies: [
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
