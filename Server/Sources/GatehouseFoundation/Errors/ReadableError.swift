import Foundation
import NIOCore
import NIOPosix
import PostgresNIO

/// What a person reads when a command or the server cannot start: the error's reason in words, with the address or
/// the database it concerns, never a secret (no password, no query's values). The errors the libraries throw say
/// `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)` or, for PostgreSQL, "Generic description to
/// prevent accidental leakage of sensitive data".
package struct ReadableError: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) {
        self.description = description
    }

    /// A readable form of `error`, or nil when it reads well already.
    package static func from(_ error: any Error, database: GatehouseConfiguration.DatabaseLocation?) -> ReadableError? {
        if let psql = error as? PSQLError { return ReadableError(description: describe(psql, database: database)) }
        if error is NIOConnectionError {
            return ReadableError(description: "cannot reach \(name(of: database)): \(reason(of: error))")
        }
        return nil
    }

    /// What every message calls the database (commands, restore, start-up errors): `SQLite /abs/path`, or
    /// `PostgreSQL host:port/database (schema s)` from its URL, never its user or password.
    package static func name(of database: GatehouseConfiguration.DatabaseLocation?) -> String {
        switch database {
        case .sqlite(let path): return "SQLite \(URL(fileURLWithPath: path).standardizedFileURL.path)"
        case .postgres(let url, let schema):
            let address = PostgresAddress.describe(url)
            return "PostgreSQL" + (address.isEmpty ? "" : " " + address) + (schema.map { " (schema \($0))" } ?? "")
        case nil: return "the database"
        }
    }

    static func describe(_ error: PSQLError, database: GatehouseConfiguration.DatabaseLocation?) -> String {
        let name = Self.name(of: database)
        switch error.code {
        case .connectionError, .serverClosedConnection:
            let why = error.underlying.map(Self.reason(of:)) ?? "the connection closed"
            return "cannot reach \(name): \(why) (is PostgreSQL running and DATABASE_URL's host and port right?)"
        case .server:
            // PostgreSQL's own words (e.g. 'password authentication failed for user "gatehouse"', 'database "x" does
            // not exist') and its SQLSTATE: what the server says about the request, never the request's values.
            let message = error.serverInfo?[.message] ?? "an error"
            let state = error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return "\(name) refused: \(message)\(state)"
        case .sslUnsupported:
            return "\(name) does not accept TLS, which DATABASE_URL asks for (sslmode)"
        case .unsupportedAuthMechanism, .authMechanismRequiresPassword, .saslError:
            return "cannot sign in to \(name): \(error.code) (check the user and password in DATABASE_URL)"
        default:
            return "\(name) failed: \(error.code)"
        }
    }

    package static func reason(of error: any Error) -> String {
        if let io = error as? IOError { return reason(errno: io.errnoCode) }
        // Foundation's file errors: the POSIX error under the Cocoa one ("permission denied", "not a directory").
        let cocoa = error as NSError
        if cocoa.domain == NSPOSIXErrorDomain { return reason(errno: CInt(cocoa.code)) }
        if let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? any Error, (underlying as NSError).domain == NSPOSIXErrorDomain {
            return reason(errno: CInt((underlying as NSError).code))
        }
        if let connect = error as? NIOConnectionError {
            let each = connect.connectionErrors.map { reason(of: $0.error) }
            return each.first ?? "cannot connect to \(connect.host):\(connect.port)"
        }
        if case ChannelError.connectTimeout = error { return "no answer within the connect timeout" }
        return "\(error)"
    }

    static func reason(errno: CInt) -> String {
        String(cString: strerror(errno)).lowercased()
    }
}
