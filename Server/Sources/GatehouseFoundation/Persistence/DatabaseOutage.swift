import AsyncKit
import Logging
import NIOCore
import PostgresNIO

/// Whether an error a request ran into says the database is away for a moment (restarting, failing over, a pooler
/// restarting, a connection lost), not that the request or the server is wrong. The surfaces answer those with
/// 503 `service_unavailable` and `Retry-After`, which clients and balancers retry, instead of 500 `internal_error`:
/// a retry with the same `Idempotency-Key` (or `clientMessageId`) is safe, whether or not the first try committed.
package enum DatabaseOutage {
    package static func matches(_ error: any Error) -> Bool {
        if let outage = error as? GatehouseError { return outage.code == .serviceUnavailable }
        switch error {
        case is DatabaseConnectionLostError, is DatabaseTimeoutError, is DatabaseClosedError, is ConnectionPoolTimeoutError, is ConnectionPoolError,
             is NIOConnectionError:
            return true
        case let error as PSQLError:
            switch error.code {
            // The client's side closed the connection under the query (its pool or `ConnectionWatch` dropping a
            // connection that a failover or a pooler's restart broke): as much an outage as the server's side.
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed:
                return true
            case .server:
                return isOutage(sqlState: error.serverInfo?[.sqlState] ?? "")
            default:
                return false
            }
        default:
            return false
        }
    }

    /// What a surface answers for an error that is no refusal of ours: `GatehouseError.serviceUnavailable` for an
    /// outage (logged as a warning), else `internal_error` (logged as an error), the log naming the request and the
    /// error in words (`ReadableError`: PostgreSQL's SQLSTATE and message, never the query's values).
    package static func refusal(for error: any Error, method: String, path: String, logger: Logger) -> GatehouseError {
        let what = ReadableError.from(error, database: nil)?.description ?? String(describing: error)
        if matches(error) {
            logger.warning("the database is away: 503 to \(method) \(path): \(what)")
            return .serviceUnavailable
        }
        logger.error("unhandled error on \(method) \(path): \(what)")
        return GatehouseError(.internal, .internalError, LocalizedText("error.internal"))
    }

    /// PostgreSQL's (and PgBouncer's) SQLSTATEs of a server that is going away or not there yet: class 08 (connection
    /// exception), 57P01–57P03 (shut down by the administrator or a crash, cannot connect now), 25006 (a read-only
    /// transaction: a standby, before the failover moved the primary's address), 53300 (too many connections).
    package static func isOutage(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "25006", "53300"].contains(sqlState)
    }
}

