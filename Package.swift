// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .library(name: "GatehouseAPI", targets: ["GatehouseAPI"]),
        .library(name: "GatehouseServer", targets: ["GatehouseServer"]),
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .library(name: "GatehouseKit", targets: ["GatehouseKit"]),
        .library(name: "GatehouseScreens", targets: ["GatehouseScreens"]),
        .library(name: "GatehouseSignature", targets: ["GatehouseSignature"]),
        .executable(name: "gatehouse-demo", targets: ["gatehouse-demo"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "GatehouseAPI",
            swiftSettings: swiftSettings
        ),
        // The handwritten-signature verifier, Foundation only, so that its evaluator
        // (Benchmarks/signature) builds in release without the server.
        .target(
            name: "GatehouseVerifier",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "signature-eval",
            dependencies: ["GatehouseVerifier", "GatehouseAPI"],
            path: "Benchmarks/signature/Evaluator",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseAPI",
                "GatehouseVerifier",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.json")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseKit",
            dependencies: [
                "GatehouseAPI",
                // The messenger's offline store (SQLite; the system's libsqlite3 on Linux).
                .product(name: "GRDB", package: "GRDB.swift"),
                // URLSessionWebSocketTask does not work on Linux (libcurl): the SDK speaks WebSocket
                // there through swift-websocket's NIO client, behind the same protocol.
                .product(name: "WSClient", package: "swift-websocket", condition: .when(platforms: [.linux])),
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
        // What the demo and the tests need of a development server (its outbox); not a product.
        .target(
            name: "GatehouseDevSupport",
            dependencies: ["GatehouseKit", "GatehouseAPI"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse-demo",
            dependencies: [
                "GatehouseScreens", "GatehouseKit", "GatehouseDevSupport", "GatehouseSignature",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every test target shares: one test clock, the engines and a fresh database per test,
        // the test configuration, the live-server launcher and its outbox reader, `eventually`.
        .target(
            name: "GatehouseTestSupport",
            dependencies: [
                "GatehouseServer", "GatehouseKit", "GatehouseDevSupport", "GatehouseAPI",
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/GatehouseTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseKitTests",
            dependencies: [
                "GatehouseKit", "GatehouseScreens", "GatehouseDevSupport", "GatehouseTestSupport",
                "GatehouseServer", "GatehouseSignature",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Support/demo_session.py", "Support/demo_messenger.py", "Support/demo_wallet.py", "Support/pdf_corpus.py", "Support/demo_sign_to_login.py", "Support/demo_sign_pdf.py", "Support/demo_menu.py"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseAPITests",
            dependencies: ["GatehouseAPI"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer", "GatehouseTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["Support/smtp_test_server.py", "Support/console_browser.py"],
            swiftSettings: swiftSettings
        ),
    ]
)
