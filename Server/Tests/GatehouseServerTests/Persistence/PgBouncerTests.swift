import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import NIOConcurrencyHelpers
import Testing

/// Gatehouse behind PgBouncer in transaction mode (`GATEHOUSE_DATABASE_DIRECT_URL`, docs/deploy.md):
/// a real PgBouncer with two server connections in front of the tests' PostgreSQL, two instances.
@Suite("PgBouncer in transaction mode")
struct PgBouncerTests {
    @Test("two instances through PgBouncer with two server connections: concurrent sends and transfers all succeed (no statement prepared by name); each instance's lease is held on a connection of its own to the database itself, and the event bus's LISTEN is there too, so an event and a revocation cross instances", .tags(.engine))
    func transactionMode() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        let database = try await TestDatabase.make(.postgres)
        guard case .postgres(let direct, _) = database.location else { return }
        try await PgBouncer.with(inFrontOf: direct, serverConnections: 2) { bouncer in
            try await withApp(on: database, configure: { c in
                c.databaseDirect = c.database
                c.database = .postgres(url: bouncer.url(of: direct))
                c.databasePoolSize = 8
                c.limits.sessionCacheTTL = 0
            }, keep: false) { first in
                #expect(first.services.database.preparesStatements == false)
                try await withSecondInstance(of: first) { second in
                    // The bus listens on the database itself: through the pooler a LISTEN ends with its transaction.
                    #expect(await eventually { first.services.bus.isConnected && second.services.bus.isConnected })
                    let heard = NIOLockedValueBox<[BusEvent]>([])
                    let subscription = second.services.bus.subscribe(topic: "test.pgbouncer", account: nil) { event in heard.withLockedValue { $0.append(event) } }
                    let event = BusEvent(topic: "test.pgbouncer", account: UUID(), body: "through the pooler")
                    try await first.services.bus.publish(event)
                    #expect(await eventually { heard.withLockedValue { $0 } == [event] })
                    withExtendedLifetime(subscription) {}

                    // Many clients at once, few server connections: a transaction's statements share one,
                    // the next transaction gets any.
                    let ann = try await first.v1.walletHolder("ann", phone: "+79160000001")
                    let bob = try await second.v1.walletHolder("bob", phone: "+79160000002")
                    try await first.credit("+79160000001", 100_000)
                    try await first.v1.befriend(ann, bob)
                    let chat = try await first.v1.openChat(ann, with: bob)
                    let transfer = String(buffer: try V1Client.encode(NewTransfer(to: PartyReference(tag: "bob"), amount: 100, comment: nil)))
                    let transfers = try await Crowd.with(port: try #require(first.client.port), connections: 16) { crowd in
                        try await withThrowingTaskGroup(of: Crowd.Answer.self) { group in
                            for _ in 0..<40 {
                                group.addTask { try await crowd.post(V1.Wallet.transfer.path, body: transfer, token: ann.token, headers: first.v1.idempotencyHeaders(UUID().uuidString)) }
                            }
                            return try await group.reduce(into: [Crowd.Answer]()) { $0.append($1) }
                        }
                    }
                    #expect(transfers.count == 40 && transfers.allSatisfy { $0.status == 201 }, "\(transfers.filter { $0.status != 201 }.prefix(3).map(\.body))")
                    let sendPath = second.v1.path(V1.Messenger.send, chat.id)
                    let sends = try await Crowd.with(port: try #require(second.client.port), connections: 24) { crowd in
                        try await withThrowingTaskGroup(of: Crowd.Answer.self) { group in
                            for i in 0..<120 {
                                let body = #"{"text":"message \#(i)","clientMessageId":"m-\#(i)"}"#
                                group.addTask { try await crowd.post(sendPath, body: body, token: i % 2 == 0 ? ann.token : bob.token) }
                            }
                            return try await group.reduce(into: [Crowd.Answer]()) { $0.append($1) }
                        }
                    }
                    #expect(sends.count == 120 && sends.allSatisfy { $0.status == 201 }, "\(sends.filter { $0.status != 201 }.prefix(3).map(\.body))")

                    // The instance lease: each instance's session-level advisory lock, on a connection of its own to
                    // the database itself (through the pooler it would sit on whichever server connection ran it).
                    let holders = try await TestDatabase.postgresStrings(url: direct, """
                        SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                        WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                        """, column: "name")
                    #expect(holders.count == 2 && holders.allSatisfy { $0.hasPrefix("gatehouse serving") }, "\(holders)")
                    #expect(try await first.v1.balance(of: ann) == 100_000 - 40 * 100)
                    #expect(try await first.v1.history(chat.id, for: bob).items.filter { $0.text.hasPrefix("message ") }.count >= 50)

                    // A revocation on one instance reaches the other's session cache over the bus.
                    let revoked = try await first.v1.delete(V1.Sessions.logout.path, token: bob.token)
                    #expect(revoked.status == .noContent)
                    #expect(try await second.v1.get(V1.Accounts.me.path, token: bob.token).status == .unauthorized)
                }
                #expect(!bouncer.log.contains("prepared statement"), "\(bouncer.log.suffix(2_000))")
            }
        }
    }

    @Test("GATEHOUSE_DATABASE_DIRECT_URL: only beside a PostgreSQL DATABASE_URL, only a PostgreSQL address, and never with a plan cache mode sent at start-up")
    func configuration() throws {
        let pooled = try GatehouseConfiguration.fromEnvironment([
            "DATABASE_URL": "postgres://gh@pgbouncer:6432/gatehouse", "GATEHOUSE_DATABASE_DIRECT_URL": "postgres://gh@db:5432/gatehouse",
        ])
        #expect(pooled.databaseDirect == .postgres(url: "postgres://gh@db:5432/gatehouse"))
        #expect(pooled.sessionDatabase == .postgres(url: "postgres://gh@db:5432/gatehouse"))
        let plain = try GatehouseConfiguration.fromEnvironment(["DATABASE_URL": "postgres://gh@db:5432/gatehouse"])
        #expect(plain.databaseDirect == nil && plain.sessionDatabase == plain.database)
        for wrong: [String: String] in [
            ["GATEHOUSE_DATABASE_DIRECT_URL": "postgres://gh@db:5432/gatehouse"],
            ["DATABASE_URL": "postgres://gh@pgbouncer:6432/gatehouse", "GATEHOUSE_DATABASE_DIRECT_URL": "gatehouse.sqlite"],
            ["DATABASE_URL": "postgres://gh@pgbouncer:6432/gatehouse", "GATEHOUSE_DATABASE_DIRECT_URL": "postgres://gh@db:5432/gatehouse",
             "GATEHOUSE_DB_PLAN_CACHE_MODE": "force_generic_plan"],
        ] {
            #expect(throws: ConfigurationError.self, "\(wrong)") { try GatehouseConfiguration.fromEnvironment(wrong) }
        }
    }
}
