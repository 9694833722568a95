import Foundation
import GatehouseAPI
import GatehouseServer
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Testing

import GatehouseFoundation
import GatehouseTestSupport

/// What a test gets: a client that speaks HTTP to the live server, the clock, and the services.
struct TestHarness {
    let client: any TestClientProtocol
    let clock: TestClock
    let services: GatehouseServices
    let configuration: GatehouseConfiguration
}

/// Builds a fresh application and database, runs `body` against the live server, tears down.
func withApp(
    _ engine: TestEngine,
    configure: (inout GatehouseConfiguration) -> Void = { _ in },
    random: GatehouseRandom = .live,
    _ body: @Sendable (TestHarness) async throws -> Void
) async throws {
    try await withApp(on: try await TestDatabase.migrated(engine), configure: configure, random: random, keep: false, body)
}

/// `withApp` on a database the caller made; `keep` leaves it (and the blob folder) for another app
/// after this one, as a restart or a restore does.
func withApp(
    on database: TestDatabase,
    configure: (inout GatehouseConfiguration) -> Void = { _ in },
    random: GatehouseRandom = .live,
    keep: Bool,
    _ body: @Sendable (TestHarness) async throws -> Void
) async throws {
    var configuration = GatehouseConfiguration.testing(database: database.location)
    configure(&configuration)
    let clock = TestClock()
    var logger = Logger(label: "gatehouse-test")
    logger.logLevel = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    let services = try GatehouseServices(configuration: configuration, dependencies: .init(clock: clock.gatehouseClock, random: random), logger: logger)
    let app = buildApplication(services: services)
    let finalConfiguration = configuration
    do {
        try await app.test(.live) { client in
            try await body(TestHarness(client: client, clock: clock, services: services, configuration: finalConfiguration))
        }
    } catch {
        await database.cleanup()
        try? FileManager.default.removeItem(atPath: finalConfiguration.blobDirectory)
        throw error
    }
    guard !keep else { return }
    await database.cleanup()
    try? FileManager.default.removeItem(atPath: finalConfiguration.blobDirectory)
}
