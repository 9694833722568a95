import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Testing

/// Reads from a PostgreSQL streaming replica (`GATEHOUSE_DATABASE_REPLICA_URLS`, docs/deploy.md):
/// a real hot standby of the tests' PostgreSQL, started by the test.
@Suite("Read replicas")
struct ReadReplicaTests {
    @Test("a streaming replica serves the people search and the chat list; a person who just wrote reads the primary; a replica whose replay is paused past the lag limit, or that is stopped, is skipped without a failed request, and serves again once back", .tags(.engine))
    func replicaServesWhatToleratesLag() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        try await PostgresReplica.with { replica in
            let replicaURL = replica.replicaURL
            try await withApp(on: .existing(.postgres(url: replica.primaryURL)), configure: { c in
                c.databaseReplicas = [.postgres(url: replicaURL)]
                c.replicaMaxLag = 2
                c.replicaPin = 3
            }, keep: false) { app in
                let replicas = try #require(app.services.database.replicas)
                #expect(await eventually(within: .seconds(30)) { replicas.serving == [true] }, "the replica never served; its lag: \(replicas.lags)")
                let metrics = try await app.get("/metrics").text.split(separator: "\n")
                let serving = metrics.first { $0.hasPrefix(#"gatehouse_replica_serving{replica="1"}"#) }
                #expect(serving.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } == 1, "\(serving ?? "no gatehouse_replica_serving")")
                #expect(metrics.contains { $0.hasPrefix(#"gatehouse_replica_lag_seconds{replica="1"}"#) })
                let ann = try await app.v1.person("ann")
                let bob = try await app.v1.person("bob")
                func search(_ q: String, by someone: Someone) async throws -> [String] {
                    let response = try await app.v1.get(V1.Messenger.people.path + "?q=" + q, token: someone.token)
                    #expect(response.status == .ok, "\(response.text)")
                    return try response.decoded(as: PeoplePage.self).items.compactMap(\.tag)
                }

                // Past the pin, bob's search is the replica's, and it has ann.
                try await Task.sleep(for: .milliseconds(3_100))
                #expect(await eventually(within: .seconds(30)) { replicas.serving == [true] }, "its lag: \(replicas.lags)")
                var before = replicas.counts
                #expect(try await search("ann", by: bob) == ["ann"])
                #expect(replicas.counts.replica == before.replica + 1)
                // The chat list too (the older history pages take the same path: `MessengerStore.messagePage`).
                #expect(try await app.v1.get(V1.Messenger.chats.path, token: bob.token).status == .ok)
                #expect(replicas.counts.replica == before.replica + 2)

                // An older page of a wallet's movements too; its newest page stays on the primary.
                let payer = try await app.v1.walletHolder("payer", phone: "+79160000001")
                for _ in 0..<2 { _ = try await app.credit("+79160000001", 100) }
                try await Task.sleep(for: .milliseconds(3_100))   // past the pin of the payer's own requests
                before = replicas.counts
                let newest = try await app.v1.get(V1.Wallet.transactions.path + "?limit=1", token: payer.token).decoded(as: WalletTransactionPage.self)
                #expect(replicas.counts.replica == before.replica, "the newest page of movements was read from the replica")
                let cursor = try #require(newest.nextCursor)
                let older = try await app.v1.get(V1.Wallet.transactions.path + "?limit=1&cursor=" + cursor, token: payer.token).decoded(as: WalletTransactionPage.self)
                #expect(older.items.count == 1 && older.items.first?.id != newest.items.first?.id)
                #expect(replicas.counts.replica == before.replica + 1, "an older page of movements was not read from the replica")

                // Read your writes: bob's request of his own pins him to the primary.
                let asked = try await app.v1.post(V1.Messenger.requestFriend.path, PersonReference(personId: ann.id), token: bob.token)
                #expect(asked.status == .ok)
                before = replicas.counts
                let friends = try await app.v1.get(V1.Messenger.friends.path, token: bob.token).decoded(as: FriendsOverview.self)
                #expect(friends.outgoing.map(\.id) == [ann.id])
                #expect(replicas.counts.replica == before.replica && replicas.counts.primary == before.primary + 1)

                // Replay paused: the primary goes on writing, the replica falls behind past the limit and is skipped.
                try await TestDatabase.postgresAdmin(url: replicaURL, "SELECT pg_wal_replay_pause()")
                _ = try await app.v1.person("carol")
                #expect(await eventually(within: .seconds(10)) { replicas.serving == [false] }, "a replica behind by more than 2 s still served")
                try await Task.sleep(for: .milliseconds(3_100))
                before = replicas.counts
                #expect(try await search("carol", by: bob) == ["carol"], "the search read a replica that had not replayed carol")
                #expect(replicas.counts.replica == before.replica)
                try await TestDatabase.postgresAdmin(url: replicaURL, "SELECT pg_wal_replay_resume()")
                #expect(await eventually(within: .seconds(10)) { replicas.serving == [true] }, "its lag: \(replicas.lags)")
                #expect(try await search("carol", by: bob) == ["carol"])

                // Stopped at once: reads never fail; the primary answers until it is back.
                replica.stop()
                for _ in 0..<5 { #expect(try await search("ann", by: bob) == ["ann"]) }
                #expect(await eventually(within: .seconds(10)) { replicas.serving == [false] })
                #expect(try await search("carol", by: bob) == ["carol"])
                try await replica.start()
                #expect(await eventually(within: .seconds(30)) { replicas.serving == [true] }, "the replica did not serve again after its restart; its lag: \(replicas.lags)")
                before = replicas.counts
                #expect(try await search("bob", by: ann) == ["bob"])
                #expect(replicas.counts.replica == before.replica + 1)
            }
        }
    }

    @Test("replica settings: PostgreSQL addresses beside a PostgreSQL database; the pin never shorter than the lag; WAL positions read as PostgreSQL writes them; the lag counted from the last position reached")
    func settings() throws {
        let set = try GatehouseConfiguration.fromEnvironment([
            "DATABASE_URL": "postgres://gh@db/gatehouse", "GATEHOUSE_DATABASE_REPLICA_URLS": "postgres://gh@r1/gatehouse, postgres://gh@r2/gatehouse",
            "GATEHOUSE_REPLICA_MAX_LAG_SECONDS": "2", "GATEHOUSE_REPLICA_PIN_SECONDS": "10",
        ])
        #expect(set.databaseReplicas == [.postgres(url: "postgres://gh@r1/gatehouse"), .postgres(url: "postgres://gh@r2/gatehouse")])
        #expect(set.replicaMaxLag == 2 && set.replicaPin == 10)
        let defaults = try GatehouseConfiguration.fromEnvironment([:])
        #expect(defaults.databaseReplicas.isEmpty && defaults.replicaMaxLag == 1 && defaults.replicaPin == 5)
        for wrong: [String: String] in [
            ["GATEHOUSE_DATABASE_REPLICA_URLS": "postgres://gh@r1/gatehouse"],
            ["DATABASE_URL": "postgres://gh@db/gatehouse", "GATEHOUSE_DATABASE_REPLICA_URLS": "replica.sqlite"],
            ["DATABASE_URL": "postgres://gh@db/gatehouse", "GATEHOUSE_REPLICA_MAX_LAG_SECONDS": "3", "GATEHOUSE_REPLICA_PIN_SECONDS": "2"],
        ] {
            #expect(throws: ConfigurationError.self, "\(wrong)") { try GatehouseConfiguration.fromEnvironment(wrong) }
        }
        #expect(ReadReplicas.position("16/B374D848") == 0x16_B374_D848)
        #expect(ReadReplicas.position("0/0") == 0 && ReadReplicas.position("x/1") == nil && ReadReplicas.position("1") == nil)
        let start = ContinuousClock.now
        let samples = [(at: start, position: UInt64(100)), (at: start + .seconds(1), position: UInt64(200)), (at: start + .seconds(2), position: UInt64(300))]
        #expect(ReadReplicas.lag(replayed: 300, samples: samples, now: start + .seconds(3)) == 0)
        #expect(ReadReplicas.lag(replayed: 250, samples: samples, now: start + .seconds(3)) == 2, "behind since the sample it reached, at 1 s")
        #expect(ReadReplicas.lag(replayed: 50, samples: samples, now: start + .seconds(3)) == .infinity)
    }
}
