import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse clients …`: the business's client records (docs/operators.md, "Client records"),
/// straight on the database (no server needed).
public enum ClientCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// What an import did, as printed.
    public struct Report: Codable, Sendable {
        public struct Refusal: Codable, Sendable {
            public var line: Int
            public var reason: String
        }
        public var created: Int
        public var updated: Int
        public var unchanged: Int
        public var refused: [Refusal]
    }

    /// Imports a file of client records (JSON lines, or CSV with a header row): every good row
    /// in one transaction, idempotent by phone; the refused rows reported with their line.
    /// `person` names who ran it in the audit trail.
    public static func importFile(configuration: GatehouseConfiguration, path: String, format: String?, as person: String?) async throws -> Report {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot read \(path)") }
        guard let text = String(data: data, encoding: .utf8) else { throw Failure(description: "\(path) is not UTF-8 text") }
        let chosen: ClientRecords.Format
        if let format {
            guard let known = ClientRecords.Format(rawValue: format) else { throw Failure(description: "--format is jsonl or csv") }
            chosen = known
        } else {
            chosen = path.lowercased().hasSuffix(".csv") ? .csv : .jsonLines
        }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let clients = services.clients
            let report = try await clients.importFile(text, format: chosen, by: .system(person.map { String($0.prefix(100)) }))
            return Report(created: report.created, updated: report.updated, unchanged: report.unchanged,
                          refused: report.refused.map { Report.Refusal(line: $0.line, reason: $0.reason) })
        }
    }
}
