import Foundation
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse audit export`: the audit trail as JSON lines, oldest first, straight from the
/// database (no server needed), for a SIEM or an archive (docs/operators.md, "The audit trail").
public enum AuditCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// One exported event: the stored row, dates in ISO 8601.
    public struct Line: Codable, Sendable {
        public var id: UUID
        public var at: Date
        public var kind: String
        public var actorType: String
        public var actorId: String?
        public var accountId: UUID?
        public var ip: String?
        public var device: String?
        public var requestId: String?
        public var detail: [String: String]
        public var count: Int
    }

    /// Writes every event from `since` (and before `until`) matching the filters to `write`, one
    /// line each, a page at a time; answers how many.
    public static func export(configuration: GatehouseConfiguration, since: Date, until: Date?, account: UUID?, kinds: [String],
                              write: (String) -> Void) async throws -> Int {
        var known: [AuditKind] = []
        for kind in kinds {
            guard let value = AuditKind(rawValue: kind) else {
                throw Failure(description: "--kind \(kind) is not one of: \(AuditKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            known.append(value)
        }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            var query = AuditLog.Query(account: account, kinds: known, since: since, until: until)
            query.oldestFirst = true
            query.limit = 1_000
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            var written = 0
            while true {
                let page = try await services.audit.events(query)
                for row in page {
                    let line = Line(id: row.id, at: row.at, kind: row.kind, actorType: row.actorType, actorId: row.actorID, accountId: row.account,
                                    ip: row.ip, device: row.device, requestId: row.requestID, detail: row.detail, count: row.count)
                    write(String(decoding: try encoder.encode(line), as: UTF8.self))
                }
                written += page.count
                guard page.count == query.limit, let last = page.last else { return written }
                query.after = last.id
            }
        }
    }
}
