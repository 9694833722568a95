import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import NIOConcurrencyHelpers
import Testing

/// PostgreSQL through its Unix socket (`PostgresAddress`, docs/deploy.md): libpq's form of the
/// address, `postgres://user@/database?host=/directory`, read the way `psql` and `pg_dump` read it.
@Suite("PostgreSQL through a Unix socket")
struct PostgresSocketTests {
    @Test("libpq's socket forms name the socket file (the directory as `host`, as a host written percent-encoded; the port in the address, as a parameter, or 5432), the user, password and database; a TCP address is read as before")
    func addresses() throws {
        let plain = try PostgresAddress.configuration("postgres://gh@/gatehouse?host=/var/run/postgresql").coreConfiguration
        #expect(plain.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432" && plain.host == nil)
        #expect(plain.username == "gh" && plain.password == nil && plain.database == "gatehouse")

        let ported = try PostgresAddress.configuration("postgres://gh:s%40cret@:6543/accounts?host=/tmp/").coreConfiguration
        #expect(ported.unixSocketPath == "/tmp/.s.PGSQL.6543" && ported.password == "s@cret" && ported.database == "accounts")
        #expect(PostgresAddress.socketPath("postgresql://gh@/accounts?host=/tmp&port=55432") == "/tmp/.s.PGSQL.55432")
        #expect(PostgresAddress.socketPath("postgres://gh@%2Fvar%2Frun%2Fpostgresql/accounts") == "/var/run/postgresql/.s.PGSQL.5432")

        // No user: the process's own, as libpq does (what PostgreSQL's `peer` authentication checks).
        let nobody = try PostgresAddress.configuration("postgres:///gatehouse?host=/tmp").coreConfiguration
        #expect(!nobody.username.isEmpty && nobody.unixSocketPath == "/tmp/.s.PGSQL.5432")

        let tcp = try PostgresAddress.configuration("postgres://u:p@db:5432/gatehouse?sslmode=disable").coreConfiguration
        #expect(tcp.host == "db" && tcp.port == 5432 && tcp.unixSocketPath == nil && tcp.database == "gatehouse")
        #expect(PostgresAddress.socketDirectory("postgres://u@db/gatehouse?host=db2") == nil, "a host parameter that is not a path is not a socket")

        // DATABASE_URL takes it; an address with neither a host nor a socket is refused by name.
        let c = try GatehouseConfiguration.fromEnvironment(["DATABASE_URL": "postgres://gh@/gatehouse?host=/var/run/postgresql"])
        #expect(c.database == .postgres(url: "postgres://gh@/gatehouse?host=/var/run/postgresql"))
        for refused in ["postgres:///gatehouse", "postgres://gh:topsecret@/gatehouse?host=relative/dir"] {
            let error = #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["DATABASE_URL": refused]) }
            // The variable, both forms it takes, and not the password it was given.
            #expect(error?.description == "configuration error: DATABASE_URL: is not a valid postgres URL (postgres://user:password@host:5432/database, "
                    + "or through a Unix socket postgres://user@/database?host=/var/run/postgresql)")
            #expect(error?.description.contains("topsecret") == false)
        }

        // What messages call it: the socket and the database, never the password.
        let name = ReadableError.name(of: .postgres(url: "postgres://gh:topsecret@/gatehouse?host=/var/run/postgresql"))
        #expect(name == "PostgreSQL socket /var/run/postgresql/.s.PGSQL.5432, database gatehouse")
        #expect(ReadableError.name(of: .postgres(url: "postgres://u:p@db:5432/gatehouse")) == "PostgreSQL db:5432/gatehouse")
    }

    @Test("an app on the tests' PostgreSQL through its socket: its connections are the socket's, the event bus listens there, money moves, and a backup and a restore take the same address", .tags(.engine))
    func serves() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        let database = try await TestDatabase.make(.postgres)
        guard case .postgres(let direct, _) = database.location, let parts = URLComponents(string: direct) else { return }
        // A socket is on the database's own machine: a PostgreSQL elsewhere has none here to reach.
        guard GatehouseConfiguration.isLoopback(parts.host ?? "") else { return }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-socket-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }

        // The socket's directory and port, as the server says them.
        let where_ = NIOLockedValueBox<(String, Int)?>(nil)
        try await withApp(on: database, keep: true) { app in
            let sql = app.services.database.sql
            let directories = try #require(try await sql.raw("SHOW unix_socket_directories").first()?.decode(column: "unix_socket_directories", as: String.self))
            let port = try #require(try await sql.raw("SHOW port").first()?.decode(column: "port", as: String.self))
            let directory = try #require(directories.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("/") },
                                         "the tests' PostgreSQL listens on a socket (scripts/start-postgres.sh)")
            where_.withLockedValue { $0 = (directory, Int(port) ?? 5432) }
        }
        let (directory, port) = try #require(where_.withLockedValue { $0 })
        var socket = URLComponents()
        socket.scheme = "postgres"
        socket.user = parts.user
        socket.password = parts.password
        socket.host = ""
        socket.path = parts.path
        socket.queryItems = [URLQueryItem(name: "host", value: directory), URLQueryItem(name: "port", value: String(port))]
        let url = try #require(socket.string)
        #expect(PostgresAddress.socketPath(url) == "\(directory)/.s.PGSQL.\(port)")

        let configure: @Sendable (inout GatehouseConfiguration) -> Void = { c in
            c.database = .postgres(url: url)
            c.storage.directory = scratch.appendingPathComponent("blobs").path
        }
        let backup = scratch.appendingPathComponent("backup")
        let people = NIOLockedValueBox<(Someone, Someone)?>(nil)
        try await withApp(on: database, configure: configure, keep: true) { app in
            // inet_client_addr() is NULL on a Unix socket's connection.
            let sql = app.services.database.sql
            let overSocket = try await sql.raw("SELECT inet_client_addr() IS NULL AS local").first()?.decode(column: "local", as: Bool.self)
            #expect(overSocket == true)
            #expect(await eventually { app.services.bus.isConnected })
            // Every connection to its database is the socket's: the pool's, the event bus's LISTEN, the instance lease's
            // (the first app's, over TCP, have closed).
            @Sendable func connections(tcp: Bool) async throws -> [String] {
                try await sql.raw("""
                    SELECT coalesce(query, '') || ' / ' || coalesce(application_name, '') AS what FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND (client_addr IS NOT NULL) = \(bind: tcp)
                    """).all().map { try $0.decode(column: "what", as: String.self) }
            }
            #expect(await eventually { (try? await connections(tcp: true).isEmpty) ?? false }, "no connection over TCP")
            let local = try await connections(tcp: false)
            #expect(local.contains { $0.hasPrefix("LISTEN ") }, "the event bus listens over the socket: \(local)")
            #expect(local.contains { $0.contains("gatehouse serving pid") }, "the instance lease is held over the socket: \(local)")
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.credit("+79160000001", 100_00)
            try await app.v1.paid(30_00, to: bob, by: ann, comment: nil)
            #expect(try await app.v1.balance(of: ann) == 70_00)
            people.withLockedValue { $0 = (ann, bob) }
            let manifest = try await BackupCommands.backup(configuration: app.configuration, to: backup)
            #expect(manifest.engine == "postgres")
        }
        let (ann, bob) = try #require(people.withLockedValue { $0 })
        try await database.wipe()
        var configuration = GatehouseConfiguration.testing(database: database.location)
        configure(&configuration)
        _ = try await BackupCommands.restore(configuration: configuration, from: backup)
        try await withApp(on: database, configure: configure, keep: false) { app in
            let session = try await app.v1.login("bob", "secret-91!")
            #expect(session.account.id == bob.id)
            let balances = (try await app.v1.balance(of: ann), try await app.v1.balance(of: bob))
            #expect(balances == (70_00, 30_00))
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
        }
    }
}
