import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import Logging
import NIOConcurrencyHelpers
import Testing

/// A restore that cannot split the data (docs/deploy.md, "Backup and restore"): every server and command holds the
/// database's instance lease, restore takes it alone; a command never makes a database it did not find.
@Suite("Restore and the instance lease")
struct InstanceLeaseTests {
    let logger = Logger(label: "lease-test")

    /// What `DATABASE_URL` says for this database.
    func url(_ database: TestDatabase) -> String {
        switch database.location {
        case .sqlite(let path): path
        case .postgres(let url, _): url
        }
    }

    /// The permission bits of a file or folder.
    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("restore under a running server refuses, names it and changes nothing; once the server stops it restores; the backup is its owner's alone",
          .tags(.engine), arguments: TestEngine.all)
    func restoreRefusedWhileServing(engine: TestEngine) async throws {
        let database = try await TestDatabase.migrated(engine)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-lease-\(UUID().uuidString)")
        let backup = scratch.appendingPathComponent("backup")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let configure: @Sendable (inout GatehouseConfiguration) -> Void = { $0.storage.directory = scratch.appendingPathComponent("blobs").path }
        var configuration = GatehouseConfiguration.testing(database: database.location)
        configure(&configuration)
        let restoreConfiguration = configuration

        try await withApp(on: database, configure: configure, keep: true) { app in
            _ = try await app.v1.person("ann")
            let manifest = try await BackupCommands.backup(configuration: app.configuration, to: backup)
            // Password hashes, sealed secrets, everyone's messages: the owner's alone.
            #expect(try mode(backup.path) == 0o700)
            #expect(try mode(backup.appendingPathComponent(manifest.database).path) == 0o600)
            #expect(try mode(backup.appendingPathComponent("backup.json").path) == 0o600)
            _ = try await app.v1.person("bob")

            // MUT: restore while this server runs
            let refused = await #expect(throws: InstanceLease.Refused.self) {
                _ = try await BackupCommands.restore(configuration: restoreConfiguration, from: backup)
            }
            let message = refused?.description ?? ""
            #expect(message.contains("is in use") && message.contains("stop every gatehouse instance"), "\(message)")
            // It names the server holding the database: this test's process.
            let holder = engine == .sqlite ? "process \(getpid())" : "gatehouse serving pid \(getpid())"
            #expect(message.contains(holder), "\(message)")
            // Nothing changed: Bob, made after the backup, still signs in and is still served.
            #expect(try await app.v1.login("bob", "secret-91!").account.tag == "bob")
        }

        // The server has stopped: the restore goes through, and the next server sees the backup's data.
        _ = try await BackupCommands.restore(configuration: restoreConfiguration, from: backup)
        try await withApp(on: database, configure: configure, keep: false) { app in
            #expect(try await app.v1.login("ann", "secret-91!").account.tag == "ann")
            let bob = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "bob", password: "secret-91!"))
            #expect(bob.status == .badRequest && bob.text.contains("invalid_credentials"), "Bob came after the backup: \(bob.text)")
        }
    }

    @Test("during a restore a server refuses to start (the gatehouse binary too) and a command refuses; after it, both work",
          .tags(.engine), arguments: TestEngine.all)
    func nothingStartsDuringARestore(engine: TestEngine) async throws {
        let database = try await TestDatabase.migrated(engine)
        let configuration = GatehouseConfiguration.testing(database: database.location)
        let restoring = try await InstanceLease.take(.exclusive, on: database.location, logger: logger)

        // MUT 1: a server's lease, as `gatehouse serve` takes it before its migrations
        let keeper = InstanceLeaseKeeper(location: database.location, logger: logger)
        let refused = await #expect(throws: InstanceLease.Refused.self) { try await keeper.take() }
        #expect(refused?.description.contains("is being restored") == true, "\(String(describing: refused))")
        // MUT 2: a command
        await #expect(throws: InstanceLease.Refused.self) {
            _ = try await DatabaseCommand.withExisting(configuration, logger: logger) { _ in 0 }
        }
        // MUT 3: the binary, as an operator would start it
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (process, output) = try cli.run(["serve", "--port", "0"], in: directory, env: ["DATABASE_URL": url(database)])
        try await cli.waitForExit(process, seconds: 60)
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus != 0 && log.contains("is being restored"), "\(log)")
        #expect(!log.contains("Gatehouse listening"), "\(log)")

        await restoring.release()
        try await keeper.take()
        #expect(try await DatabaseCommand.withExisting(configuration, logger: logger) { try await $0.database.isMigrated() })
        // A second server on the same database is fine: the lease is shared between instances.
        let second = InstanceLeaseKeeper(location: database.location, logger: logger)
        try await second.take()
        await #expect(throws: InstanceLease.Refused.self) {
            _ = try await InstanceLease.take(.exclusive, on: database.location, logger: logger)
        }
        await keeper.release()
        await second.release()
        await database.cleanup()
    }

    @Test("PostgreSQL: a restore whose dump pg_restore cannot read fails with pg_restore's own words, and leaves no file of its error output behind", .tags(.engine))
    func restore_unreadableDump_saysWhatPgRestoreSaid() async throws {
        guard TestEngine.all.contains(.postgres) else { return }
        // setup: a backup folder whose manifest is right and whose dump is not one
        let database = try await TestDatabase.make(.postgres)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-bad-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"gatehouse":"test","engine":"postgres","createdAt":"2026-12-04T00:00:00Z","database":"gatehouse.pgdump"}"#.utf8)
            .write(to: folder.appendingPathComponent("backup.json"))
        try Data("not a dump".utf8).write(to: folder.appendingPathComponent("gatehouse.pgdump"))
        let leftBefore = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("gatehouse-pg_restore-") }.count

        // MUT
        let error = await #expect(throws: BackupCommands.Failure.self) {
            _ = try await BackupCommands.restore(configuration: GatehouseConfiguration.testing(database: database.location), from: folder)
        }
        let leftAfter = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("gatehouse-pg_restore-") }.count
        await database.cleanup()

        // validate
        #expect(error?.description.hasPrefix("pg_restore failed (1): pg_restore: error:") == true, "\(String(describing: error))")
        #expect(error?.description.contains("valid archive") == true, "\(String(describing: error))")
        #expect(leftAfter == leftBefore, "the error output's file is removed")
    }

    @Test("a command finds no database: it refuses, names the path or the database, and makes nothing", .tags(.engine),
          arguments: TestEngine.all)
    func noDatabaseNoNewOne(engine: TestEngine) async throws {
        let database = try await TestDatabase.make(engine)   // empty: never migrated
        let configuration = GatehouseConfiguration.testing(database: database.location)

        // MUT
        let missing = await #expect(throws: DatabaseCommand.Missing.self) {
            _ = try await DatabaseCommand.withExisting(configuration, logger: logger) { _ in 0 }
        }
        #expect(missing?.description.contains("nothing was created") == true)
        switch database.location {
        case .sqlite(let path):
            #expect(missing?.description.contains("no database at \(URL(fileURLWithPath: path).standardizedFileURL.path)") == true)
            #expect(!FileManager.default.fileExists(atPath: path), "no file was made")
        case .postgres:
            #expect(missing?.description.contains("holds no gatehouse database") == true)
            let provider = try DatabaseProvider(location: database.location, poolSize: 1, threadPool: .singleton, logger: logger)
            let migrated = try await provider.isMigrated()
            await provider.shutdown()
            #expect(!migrated, "no table was made")
        }
        await database.cleanup()
    }

    @Test("the binary run from a folder without a database: the commands refuse naming the file and make nothing; migrate makes one and says which")
    func binaryInAnEmptyFolder() async throws {
        let cli = CommandLineTests()
        let directory = try cli.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("gatehouse.sqlite").standardizedFileURL.path
        for command in [["accounts", "find", "annlee"], ["wallet", "credit", "--phone", "+79160000001", "--amount", "1"], ["outbox"],
                        ["backup", "--to", directory.appendingPathComponent("b").path]] {
            // MUT
            let (process, output) = try cli.run(command, in: directory)
            try await cli.waitForExit(process, seconds: 60)
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(process.terminationStatus != 0, "\(command): \(log)")
            #expect(log.contains("no database at \(file)"), "\(command): \(log)")
        }
        let made = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("gatehouse.sqlite") }
        #expect(made.isEmpty, "\(made)")

        let (migrate, migrated) = try cli.run(["migrate"], in: directory)
        try await cli.waitForExit(migrate, seconds: 60)
        let log = (try? String(contentsOf: migrated, encoding: .utf8)) ?? ""
        #expect(migrate.terminationStatus == 0 && log.contains("gatehouse: SQLite \(file)"), "\(log)")
        let (find, found) = try cli.run(["accounts", "find", "annlee"], in: directory)
        try await cli.waitForExit(find, seconds: 60)
        let answer = (try? String(contentsOf: found, encoding: .utf8)) ?? ""
        #expect(answer.contains("gatehouse: SQLite \(file)") && !answer.contains("no database"), "\(answer)")
    }
}
