import Foundation
import GatehouseAPI
import GatehouseAccounts
import GatehouseFoundation
import GatehouseSurfaces
import HummingbirdBcrypt
import Logging
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// What the `gatehouse` executable does, kept in the library so it is tested like the rest.
public enum ServerCommands {
    /// The OpenAPI document the server serves, as JSON or YAML (for generating a client offline).
    public static func openAPIDocument(yaml: Bool) -> String {
        yaml ? OpenAPIDocument.yaml : OpenAPIDocument.json
    }

    /// Runs migrations and exits: the one command besides `serve` that may make the database. It names it on
    /// standard error and holds the instance lease while it runs (`DatabaseCommand`).
    public static func migrate(configuration: GatehouseConfiguration) async throws {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = configuration.logLevel
        let lease = try await InstanceLease.take(.shared, on: configuration.sessionDatabase, logger: logger)
        DatabaseCommand.announce(lease)
        do {
            let services = try GatehouseServices(configuration: configuration, logger: logger)
            do {
                try await services.migrate()
            } catch {
                await services.shutdownOutsideApplication()
                throw error
            }
            await services.shutdownOutsideApplication()
        } catch {
            await lease.release()
            throw error
        }
        await lease.release()
    }

    /// The newest outbox messages, oldest of them first, as lines for a terminal.
    public static func outbox(configuration: GatehouseConfiguration, to: String?, last: Int) async throws -> [DevOutboxMessage] {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        return try await DatabaseCommand.withExisting(configuration, logger: logger) { services in
            try await services.database.prepareEngine()
            // As typed: `89161112233` finds what went to `+79161112233`, as `/dev/outbox` does.
            let destination = to.map { PhoneNumber.destination($0, defaultCountryCode: configuration.defaultCountryCode) }
            return try await OutboxQuery.recent(database: services.database, to: destination, limit: last)
        }
    }

    /// Erases now the accounts whose deletion grace period has ended (the maintenance of every
    /// instance does it each minute); answers how many it erased.
    package static func eraseDeletedAccounts(configuration: GatehouseConfiguration) async throws -> Int {
        var logger = Logger(label: "gatehouse")
        logger.logLevel = .warning
        return try await DatabaseCommand.withExisting(configuration, logger: logger) { services in
            try await services.database.prepareEngine()
            return try await services.accountDeletion.eraseDue()
        }
    }

    /// Times `count` bcrypt hashes at `cost` with the hasher the server uses, one after another on
    /// this thread: the seconds one hash takes. Operators pick a cost with it; the login benchmark
    /// derives its bound (cores ÷ this) from it.
    public static func bcryptSecondsPerHash(cost: Int, count: Int) -> Double {
        _ = Bcrypt.hash("warm-up", cost: UInt8(cost))
        let start = ContinuousClock.now
        for i in 0..<count { _ = Bcrypt.hash("password-\(i)", cost: UInt8(cost)) }
        let elapsed = ContinuousClock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(count)
    }

    /// Refuses at once, before any migration runs, when `host:port` cannot be listened on (another process has it,
    /// or the address is not this machine's), naming the address and what to do. Port 0 (any free one) always can.
    public static func checkListenable(host: String, port: Int) throws {
        guard port != 0 else { return }
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw ReadableError(description: "cannot listen on \(host):\(port): \(host) is not an address of this machine (GATEHOUSE_HOST or --host)")
        }
        let descriptor = socket(address.protocol.rawValue, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockAddr { bind(descriptor, $0, socklen_t($1)) }
        guard bound != 0 else { return }
        let code = errno
        switch code {
        case EADDRINUSE:
            throw ReadableError(description: "cannot listen on \(host):\(port): another process is listening there (a gatehouse "
                                + "already running?); stop it, or choose another port with GATEHOUSE_PORT or --port")
        case EACCES:
            throw ReadableError(description: "cannot listen on \(host):\(port): ports below 1024 need privileges; choose another "
                                + "with GATEHOUSE_PORT or --port, and put a proxy in front (docs/deploy.md)")
        case EADDRNOTAVAIL:
            throw ReadableError(description: "cannot listen on \(host):\(port): \(host) is not an address of this machine (GATEHOUSE_HOST or --host)")
        default:
            throw ReadableError(description: "cannot listen on \(host):\(port): \(String(cString: strerror(code)).lowercased())")
        }
    }

    /// Refuses at once, before any migration runs, when the embedded blob folder (`GATEHOUSE_BLOB_DIR`) cannot be
    /// made or written by this process's user: otherwise the first avatar or attachment would fail with a 500, long
    /// after the start looked fine (a systemd unit whose working folder is read-only, with the folder's relative
    /// default). Makes the folder when it is missing, as `serve` makes its database. Nothing to check with S3.
    public static func checkBlobFolder(_ configuration: GatehouseConfiguration) throws {
        guard configuration.storage.s3 == nil else { return }
        let folder = URL(fileURLWithPath: configuration.blobDirectory).standardizedFileURL
        let probe = folder.appendingPathComponent(".gatehouse-write-check-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data().write(to: probe)
            try FileManager.default.removeItem(at: probe)
        } catch {
            throw ReadableError(description: "the blob folder \(folder.path) cannot be written by this user (\(ReadableError.reason(of: error))): set GATEHOUSE_BLOB_DIR to "
                                + "a folder it may write (docs/deploy.md, \"The machine\"), or the GATEHOUSE_S3_* settings; nothing was started")
        }
    }

    /// How to run this executable again, as a person would type it (`GatehouseInvocation`).
    public static var invocation: String { GatehouseInvocation.current }

    /// The lines `gatehouse serve` prints once it listens.
    public static func banner(configuration: GatehouseConfiguration, port: Int) -> [String] {
        var lines = ["Gatehouse listening on http://\(configuration.host):\(port) (\(configuration.environment.rawValue))"]
        if configuration.environment == .development, !GatehouseConfiguration.isLoopback(configuration.host) {
            lines.append("WARNING: development mode on a network address (GATEHOUSE_ALLOW_DEV_ON_NETWORK=true): "
                + "anyone who reaches \(configuration.host):\(port) can read every code and password at /dev/outbox")
        }
        switch configuration.database {
        case .sqlite(let path): lines.append("database: SQLite file \(URL(fileURLWithPath: path).standardizedFileURL.path)")
        case .postgres: lines.append("database: PostgreSQL")
        }
        if configuration.delivery.smsChannel == .dev || configuration.delivery.emailChannel == .dev {
            var where_ = ["`\(invocation) outbox --to +79123456789`"]
            if configuration.environment == .development {
                where_.append("http://\(configuration.host):\(port)/dev/outbox?to=+79123456789")
            }
            if configuration.environment == .production {
                lines.append("WARNING: production with development delivery (GATEHOUSE_ALLOW_DEV_DELIVERY=true): codes and mails stay in the "
                    + "outbox and reach nobody; read them with " + where_.joined(separator: " or "))
            } else {
                lines.append("dev delivery: codes and mails stay in the outbox; read them with " + where_.joined(separator: " or "))
            }
        }
        let push = configuration.delivery.push
        switch (push.apns != nil, push.fcm != nil) {
        case (true, true): lines.append("push: APNs and FCM")
        case (true, false): lines.append("push: APNs only (no GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE)")
        case (false, true): lines.append("push: FCM only (no GATEHOUSE_APNS_KEY_FILE)")
        case (false, false):
            lines.append(configuration.environment == .development
                ? "push: kept in the outbox (development; set GATEHOUSE_APNS_* or GATEHOUSE_FCM_* to send)"
                : "push: off (set GATEHOUSE_APNS_* or GATEHOUSE_FCM_* to send; docs/push.md)")
        }
        return lines
    }
}
