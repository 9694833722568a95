import Foundation
import PostgresKit

/// A PostgreSQL address as libpq and its tools read it (`DATABASE_URL`, `DATABASE_DIRECT_URL`, the
/// replicas' addresses): over TCP, `postgres://user:password@host:5432/database`; on this machine
/// through PostgreSQL's Unix socket, libpq's form with the socket's directory as its `host`
/// parameter, `postgres://user@/database?host=/var/run/postgresql` (`port`, in the address or as a
/// parameter, picks the socket file `.s.PGSQL.<port>`, 5432 by default; with no user, the
/// process's own, as libpq does, which PostgreSQL's `peer` authentication expects). The same
/// string goes to `pg_dump` and `pg_restore` unchanged (`gatehouse backup`, `restore`).
/// (Not a speed-up: measured, a round trip costs the same over the socket as over loopback TCP;
/// docs/decisions.md, "ninth look".)
package enum PostgresAddress {
    /// The socket's directory when `url` names one (libpq's `host` parameter, or a host that is a
    /// path, written percent-encoded: `postgres://%2Ftmp/database`); nil for TCP.
    package static func socketDirectory(_ url: String) -> String? {
        guard let parts = URLComponents(string: url) else { return nil }
        if let host = parts.queryItems?.last(where: { $0.name == "host" })?.value, host.hasPrefix("/") { return host }
        if let host = parts.percentEncodedHost?.removingPercentEncoding, host.hasPrefix("/") { return host }
        return nil
    }

    /// The socket file's path (`<directory>/.s.PGSQL.<port>`) when `url` names a socket.
    package static func socketPath(_ url: String) -> String? {
        guard let directory = socketDirectory(url), let parts = URLComponents(string: url) else { return nil }
        let port = parts.port ?? parts.queryItems?.last(where: { $0.name == "port" })?.value.flatMap(Int.init) ?? 5432
        return (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/.s.PGSQL.\(port)"
    }

    /// The connection settings for `url`: a socket's when it names one, else PostgresKit's
    /// reading of a TCP address (its `sslmode`/`tlsmode` included).
    package static func configuration(_ url: String) throws -> SQLPostgresConfiguration {
        guard let path = socketPath(url), let parts = URLComponents(string: url) else {
            return try SQLPostgresConfiguration(url: url)
        }
        let query = parts.queryItems ?? []
        let user = parts.user.flatMap { $0.isEmpty ? nil : $0 } ?? query.last(where: { $0.name == "user" })?.value ?? processUser()
        let password = parts.password ?? query.last(where: { $0.name == "password" })?.value
        let name = parts.path.drop { $0 == "/" }
        let database = name.isEmpty ? query.last(where: { $0.name == "dbname" })?.value : String(name)
        guard let user, !user.isEmpty else { throw URLError(.badURL) }
        return SQLPostgresConfiguration(coreConfiguration: .init(unixSocketPath: path, username: user, password: password, database: database))
    }

    /// What messages call the address, never its user or password: `host:port/database`, or the
    /// socket's path and the database.
    package static func describe(_ url: String) -> String {
        guard let parts = URLComponents(string: url) else { return "" }
        let database = String(parts.path.drop { $0 == "/" })
        if let path = socketPath(url) { return "socket \(path)" + (database.isEmpty ? "" : ", database \(database)") }
        return "\(parts.host ?? "localhost"):\(parts.port ?? 5432)" + (database.isEmpty ? "" : "/\(database)")
    }

    private static func processUser() -> String? {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
