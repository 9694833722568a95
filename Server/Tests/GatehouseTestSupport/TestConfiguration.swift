import Foundation
import GatehouseFoundation
import GatehouseServer

extension GatehouseConfiguration {
    /// Fast, deterministic settings for tests: bcrypt cost 4, quick polling, port 0.
    public static func testing(database: DatabaseLocation) -> GatehouseConfiguration {
        var c = GatehouseConfiguration()
        c.host = "127.0.0.1"
        c.port = 0
        c.database = database
        c.publicURL = "http://gatehouse.test"
        c.passwords.bcryptCost = 4
        c.databasePoolSize = 2
        c.databasePoolTimeout = 10  // a loaded CI machine can take seconds to hand out a connection
        c.delivery.pollInterval = .milliseconds(50)
        c.delivery.firstAttemptWait = .seconds(3)
        c.logLevel = .warning
        c.http.maxConnectionsPerAddress = 100_000   // every test client is 127.0.0.1
        // A test's live client connects as its app starts, and on a loaded machine may send its first request
        // well past the 10 s a request head gets (a second instance's, after a long first step): the server then
        // rightly closes it. The tests of that timeout set their own.
        c.http.headerTimeout = 120
        c.limits.codeRequestsPerAddressPerDestination = 1_000
        c.wallet.topUps.provider = .local  // development's default (GatehouseConfiguration.fromEnvironment)
        // Blobs of one test in a folder of their own (beside a SQLite file they are anyway).
        c.storage.directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-blobs-\(UUID().uuidString)").path
        return c
    }
}

