import Foundation
import GatehouseAPI
import GatehouseFoundation
import Logging
import SQLKit

/// `gatehouse backup` and `gatehouse restore` (docs/deploy.md, "Backup and restore"): the database
/// and the embedded blob folder, together, into a folder of their own.
///
/// - SQLite: `VACUUM INTO` writes a consistent copy while the server runs (SQLite's online backup).
/// - Both: restore takes the database's instance lease alone (`InstanceLease`), so it refuses while any server or
///   command uses the database; backups are their owner's alone (0700 folders, 0600 files).
/// - PostgreSQL: `pg_dump --format=custom` (a consistent snapshot while the server runs), restored
///   by `pg_restore --clean`; both must be on `PATH` (Debian: `postgresql-client`, of the server's
///   major version or newer).
/// - Blobs: the embedded folder is copied. Blobs in an S3 bucket are not: keep the bucket versioned
///   (or replicated) instead, as its provider documents.
///
/// Blobs are copied after the database, so a backup never names a blob it lacks: a blob stored
/// meanwhile is extra, and the collector removes it after its grace period once restored.
public enum BackupCommands {
    /// What a backup holds, written beside it as `backup.json`.
    public struct Manifest: Codable, Sendable {
        public var gatehouse: String
        public var engine: String
        public var createdAt: Date
        /// The database's file in the folder: `gatehouse.sqlite` or `gatehouse.pgdump`.
        public var database: String
        /// Blobs copied (nil: they live in an S3 bucket and were not copied).
        public var blobs: Int?
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes a backup of the configured database and blob folder into `directory` (made; must be empty). What it
    /// writes is readable by its owner only (folders 0700, files 0600): it holds password hashes, sealed secrets and
    /// everyone's messages. The database must exist (`DatabaseCommand`): a backup run from another folder never
    /// makes, and backs up, an empty one.
    public static func backup(configuration: GatehouseConfiguration, to directory: URL) async throws -> Manifest {
        let files = FileManager.default
        if files.fileExists(atPath: directory.path), try !files.contentsOfDirectory(atPath: directory.path).isEmpty {
            throw Failure(description: "\(directory.path) is not empty: a backup goes into a folder of its own")
        }
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        let (engine, database) = try await DatabaseCommand.withExisting(configuration, logger: logger) { services -> (String, String) in
            // Made once the database is known to be there: a refused backup leaves nothing behind.
            try files.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try files.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
            // pg_dump's snapshot is a session's: behind a pooler in transaction mode, the database itself.
            switch configuration.sessionDatabase {
            case .sqlite:
                // SQLite's online backup: a consistent copy while the server runs.
                let file = directory.appendingPathComponent("gatehouse.sqlite").path
                try await services.database.sql.raw("VACUUM INTO \(bind: file)").run()
                return ("sqlite", "gatehouse.sqlite")
            case .postgres(let url, let searchPath):
                var arguments = ["--format=custom", "--no-owner", "--file=" + directory.appendingPathComponent("gatehouse.pgdump").path]
                if let searchPath { arguments.append("--schema=" + searchPath) }
                try run("pg_dump", arguments + ["--dbname=" + url])
                return ("postgres", "gatehouse.pgdump")
            }
        }
        try ownerOnly(directory.appendingPathComponent(database))
        var blobs: Int?
        if configuration.storage.s3 == nil {
            blobs = try copyTree(URL(fileURLWithPath: configuration.blobDirectory), to: directory.appendingPathComponent("blobs"))
        }
        let manifest = Manifest(gatehouse: GatehouseVersion.current, engine: engine, createdAt: Date(), database: database, blobs: blobs)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let manifestFile = directory.appendingPathComponent("backup.json")
        try encoder.encode(manifest).write(to: manifestFile)
        try ownerOnly(manifestFile)
        return manifest
    }

    /// Puts a backup back: the database replaced by the backup's, the blob folder by its copy. Refuses, changing
    /// nothing, while a server or a command holds the database's instance lease (`InstanceLease`), and holds it
    /// alone until done, so no instance starts meanwhile. The server's next start migrates it if the backup is older.
    public static func restore(configuration: GatehouseConfiguration, from directory: URL) async throws -> Manifest {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent("backup.json").path) else {
            throw Failure(description: "\(directory.path) holds no backup.json: not a backup of gatehouse backup")
        }
        let manifest = try decoder.decode(Manifest.self, from: data)
        let expected = { if case .sqlite = configuration.database { "sqlite" } else { "postgres" } }()
        guard manifest.engine == expected else {
            throw Failure(description: "a \(manifest.engine) backup cannot be restored into \(expected == "sqlite" ? "SQLite" : "PostgreSQL")")
        }
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        let lease = try await InstanceLease.take(.exclusive, on: configuration.sessionDatabase, logger: logger)
        FileHandle.standardError.write(Data("gatehouse: restoring into \(lease.databaseName)\n".utf8))
        do {
            let dump = directory.appendingPathComponent(manifest.database)
            switch configuration.sessionDatabase {
            case .sqlite(let path):
                let files = FileManager.default
                for suffix in ["", "-wal", "-shm"] where files.fileExists(atPath: path + suffix) { try files.removeItem(atPath: path + suffix) }
                try files.copyItem(atPath: dump.path, toPath: path)
                try ownerOnly(URL(fileURLWithPath: path))
            case .postgres(let url, _):
                try run("pg_restore", ["--clean", "--if-exists", "--no-owner", "--exit-on-error", "--dbname=" + url, dump.path])
            }
            if manifest.blobs != nil, configuration.storage.s3 == nil {
                let folder = URL(fileURLWithPath: configuration.blobDirectory)
                try? FileManager.default.removeItem(at: folder)
                _ = try copyTree(directory.appendingPathComponent("blobs"), to: folder)
            }
        } catch {
            await lease.release()
            throw error
        }
        await lease.release()
        return manifest
    }

    /// Readable and writable by its owner only.
    private static func ownerOnly(_ file: URL) throws {
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// Copies a folder's files (a missing source is an empty one); answers how many files.
    /// Folders it makes are 0700 and files 0600, whatever the source's (a backup's blobs are its owner's alone).
    private static func copyTree(_ source: URL, to target: URL) throws -> Int {
        let files = FileManager.default
        try files.createDirectory(at: target, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let walker = files.enumerator(at: source, includingPropertiesForKeys: [.isRegularFileKey]) else { return 0 }
        var count = 0
        for case let file as URL in walker where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            let relative = String(file.standardizedFileURL.path.dropFirst(source.standardizedFileURL.path.count + 1))
            let destination = target.appendingPathComponent(relative)
            try files.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true,
                                      attributes: [.posixPermissions: 0o700])
            try files.copyItem(at: file, to: destination)
            try ownerOnly(destination)
            count += 1
        }
        return count
    }

    /// Runs a PostgreSQL client tool found on PATH; its error output becomes the failure.
    ///
    /// The error output goes to a file read after the tool exits, not through a pipe read to its
    /// end: a pipe's end reaches every process started meanwhile by the same process (its
    /// descriptors are inherited), so one started beside the tool and still running would keep
    /// the pipe open after the tool had exited, and the read would never end (a restore in the
    /// full check's parallel tests waited half an hour for a test's S3 stand-in).
    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-\(tool)-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw Failure(description: "cannot write \(file.path)")
        }
        defer { try? FileManager.default.removeItem(at: file) }
        let errors = try FileHandle(forWritingTo: file)
        defer { try? errors.close() }
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run \(tool): \(error) (install the PostgreSQL client, e.g. Debian's postgresql-client)")
        }
        process.waitUntilExit()
        let message = (try? Data(contentsOf: file)) ?? Data()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool) failed (\(process.terminationStatus)): " + String(decoding: message, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }
}
