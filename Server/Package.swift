// swift-tools-version:6.1
// The server, its CLI, the terminal demo and the server-side tools. The SDK is the package at the
// repository's root (what an iOS app adds); this one depends on it by path for the wire contract
// (`GatehouseAPI`) and, in the demo and the tests, for the SDK itself.
import Foundation
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "gatehouse-server",
    platforms: [.macOS(.v14), .iOS(.v15)],
    products: [
        .library(name: "GatehouseServer", targets: ["GatehouseServer"]),
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .executable(name: "gatehouse-demo", targets: ["gatehouse-demo"]),
    ],
    dependencies: [
        .package(name: "gatehouse", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
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
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // The handwritten-signature verifier, Foundation only, so that its evaluator
        // (signature-eval, driven by Benchmarks/signature) builds in release without the server.
        .target(
            name: "GatehouseVerifier",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "signature-eval",
            dependencies: ["GatehouseVerifier", .product(name: "GatehouseAPI", package: "gatehouse"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOFoundationCompat", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // The bare framework's route: the floor Benchmarks/http compares every request with.
        .executableTarget(
            name: "http-floor",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
        // A send's database round trips made by PostgresNIO alone: the floor Benchmarks/messenger compares a send's server time with.
        .executableTarget(
            name: "db-floor",
            dependencies: ["GatehouseFoundation", .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseFoundation",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehousePlatform",
            dependencies: [
                "GatehouseFoundation",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseAccounts",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseMessenger",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                "GatehouseAccounts",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "FluentSQL", package: "fluent-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseWallet",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                "GatehouseAccounts",
                "GatehouseMessenger",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "FluentSQL", package: "fluent-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseSignToLogin",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                "GatehouseAccounts",
                "GatehouseVerifier",
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "FluentSQL", package: "fluent-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseSurfaces",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                "GatehouseAccounts",
                "GatehouseMessenger",
                "GatehouseWallet",
                "GatehouseSignToLogin",
                "GatehouseVerifier",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Yams", package: "Yams"),
            ],
            resources: [.copy("Resources/openapi-prose.yaml"), .copy("Resources/common-passwords.txt.gz")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseFoundation",
                "GatehousePlatform",
                "GatehouseAccounts",
                "GatehouseMessenger",
                "GatehouseWallet",
                "GatehouseSignToLogin",
                "GatehouseSurfaces",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseServer", "GatehouseFoundation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse-demo",
            dependencies: [
                .product(name: "GatehouseDevSupport", package: "gatehouse"),
                .product(name: "GatehouseScreens", package: "gatehouse"),
                .product(name: "GatehouseKit", package: "gatehouse"),
                .product(name: "GatehouseSignature", package: "gatehouse"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every test target shares: one test clock, the engines and a fresh database per test,
        // the test configuration, the live-server launcher and its outbox reader, `eventually`.
        .target(
            name: "GatehouseTestSupport",
            dependencies: [
                "GatehouseFoundation", "GatehousePlatform", "GatehouseAccounts", "GatehouseMessenger", "GatehouseWallet",
                "GatehouseSignToLogin", "GatehouseSurfaces", "GatehouseServer", .product(name: "GatehouseDevSupport", package: "gatehouse"),
                .product(name: "GatehouseKit", package: "gatehouse"),
                .product(name: "GatehouseAPI", package: "gatehouse"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // The identity providers' stand-in serves HTTP.
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Tests/GatehouseTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseKitTests",
            dependencies: [
                "GatehouseFoundation", "GatehousePlatform", "GatehouseAccounts", "GatehouseMessenger", "GatehouseWallet",
                "GatehouseSignToLogin", "GatehouseSurfaces", "GatehouseServer", .product(name: "GatehouseDevSupport", package: "gatehouse"), "GatehouseTestSupport",
                .product(name: "GatehouseKit", package: "gatehouse"),
                .product(name: "GatehouseScreens", package: "gatehouse"),
                .product(name: "GatehouseSignature", package: "gatehouse"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Support/demo_session.py", "Support/demo_messenger.py", "Support/demo_wallet.py", "Support/pdf_corpus.py", "Support/demo_sign_to_login.py", "Support/demo_sign_pdf.py", "Support/demo_menu.py",
                      "Support/demo_notifications.py", "Support/Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseAPITests",
            dependencies: [.product(name: "GatehouseAPI", package: "gatehouse")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseFoundation", "GatehousePlatform", "GatehouseAccounts", "GatehouseMessenger", "GatehouseWallet",
                "GatehouseSignToLogin", "GatehouseSurfaces", "GatehouseServer", "GatehouseTestSupport",
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            exclude: ["Support/smtp_test_server.py", "Support/console_browser.py", "Support/operator_browser.py", "Support/browser_session.py", "Support/server_process.py", "Support/oidc_browser.py", "Support/push_peers.py", "Support/stripe_peer.py", "Support/pwned_range_peer.py",
                      "Support/webauthn_authenticator.py", "Support/operators_create_tty.py", "Support/webhook_receiver.py"],
            swiftSettings: swiftSettings
        ),
    ]
)

// The SDK guide's samples (docs/sdk.md, docs/sdk.ru.md), compiled in this package's one build: scripts/test.sh has
// scripts/check-sdk-guide.py write them into SDKGuideSamples/ (git-ignored) first, as an app's sources that add the
// SDK's products; the quick starts are executables the guide check then runs against a live server.
let guideSamples = Context.packageDirectory + "/SDKGuideSamples"
if FileManager.default.fileExists(atPath: guideSamples + "/Guide") {
    let sdk: [Target.Dependency] = [
        .product(name: "GatehouseKit", package: "gatehouse"),
        .product(name: "GatehouseDevSupport", package: "gatehouse"),
    ]
    package.targets += [
        .target(name: "SDKGuideSamples", dependencies: sdk + [
            .product(name: "GatehouseScreens", package: "gatehouse"),
            .product(name: "GatehouseSignature", package: "gatehouse"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], path: "SDKGuideSamples/Guide",
        // A sample is a fragment: a value it makes and leaves unused is the reader's to use, not a warning of ours.
        swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
        .executableTarget(name: "SDKGuideQuickStart", dependencies: sdk, path: "SDKGuideSamples/QuickStart"),
        .executableTarget(name: "SDKGuideQuickStartRu", dependencies: sdk, path: "SDKGuideSamples/QuickStartRu"),
    ]
}
