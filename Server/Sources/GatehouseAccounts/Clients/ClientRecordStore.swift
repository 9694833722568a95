import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Every statement of `client_records` (`ClientRecords` holds the rules: the files' checks, binding, audits).
package struct ClientRecordStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// How a record compares with the stored one of its phone.
    package enum Comparison: Sendable {
        case absent, same, different
    }

    /// `parts`: the record's parts as stored (JSON with sorted keys); compared as text, as they are written.
    package func compare(_ record: ClientRecord, parts: String, on tx: any GatehouseDatabase) async throws -> Comparison {
        guard let existing = try await tx.raw("""
            SELECT first_name, last_name, middle_name, email, birthday, room, base, parts FROM client_records WHERE phone = \(bind: record.phone)
            """).first() else { return .absent }
        let same = try existing.decode(column: "first_name", as: String?.self) == record.firstName
            && existing.decode(column: "last_name", as: String?.self) == record.lastName
            && existing.decode(column: "middle_name", as: String?.self) == record.middleName
            && existing.decode(column: "email", as: String?.self) == record.email
            && existing.decode(column: "birthday", as: String?.self) == record.birthday
            && existing.decode(column: "room", as: String?.self) == record.room
            && existing.decode(column: "base", as: String?.self) == record.base
            && existing.decode(column: "parts", as: String.self) == parts
        return same ? .same : .different
    }

    /// Replaces the data of the record's phone (its binding kept): the account bound to it, if any.
    package func update(_ record: ClientRecord, parts: String, at now: Date, on tx: any GatehouseDatabase) async throws -> UUID? {
        try await tx.raw("""
            UPDATE client_records SET first_name = \(bind: record.firstName), last_name = \(bind: record.lastName),
                middle_name = \(bind: record.middleName), email = \(bind: record.email), birthday = \(bind: record.birthday),
                room = \(bind: record.room), base = \(bind: record.base), parts = \(bind: parts), updated_at = \(bind: now)
            WHERE phone = \(bind: record.phone) RETURNING account_id
            """).first(decodingColumn: "account_id", as: UUID?.self) ?? nil
    }

    package func insert(_ record: ClientRecord, parts: String, at now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO client_records (phone, first_name, last_name, middle_name, email, birthday, room, base, parts, created_at, updated_at)
            VALUES (\(bind: record.phone), \(bind: record.firstName), \(bind: record.lastName), \(bind: record.middleName),
                    \(bind: record.email), \(bind: record.birthday), \(bind: record.room), \(bind: record.base), \(bind: parts),
                    \(bind: now), \(bind: now))
            """).run()
    }

    /// The account bound to the phone's record, if any.
    package func boundAccount(phone: String, on tx: any GatehouseDatabase) async throws -> UUID? {
        try await tx.raw("SELECT account_id FROM client_records WHERE phone = \(bind: phone)").first(decodingColumn: "account_id", as: UUID?.self) ?? nil
    }

    /// A record deleted: the account it was bound to.
    package struct Deleted: Sendable {
        package var account: UUID?
    }

    /// Deletes the phone's record: nil when there is none.
    package func delete(phone: String, on tx: any GatehouseDatabase) async throws -> Deleted? {
        guard let row = try await tx.raw("DELETE FROM client_records WHERE phone = \(bind: phone) RETURNING account_id").first() else { return nil }
        return Deleted(account: try row.decode(column: "account_id", as: UUID?.self))
    }

    /// Unbinds the record bound to the account for good (never bound to it again by its logins): its phone, nil when
    /// none was bound.
    package func unbind(accountID: UUID, on tx: any GatehouseDatabase) async throws -> String? {
        try await tx.raw("""
            UPDATE client_records SET account_id = NULL, bound_at = NULL, unbound_account_id = \(bind: accountID)
            WHERE account_id = \(bind: accountID) RETURNING phone
            """).first(decodingColumn: "phone", as: String.self)
    }

    /// Unbinds the account's record when its phone is not `phone`: its phone, nil when none was.
    package func unbindStale(accountID: UUID, keeping phone: String?, on tx: any GatehouseDatabase) async throws -> String? {
        let condition: SQLQueryString = phone.map { "AND phone <> \(bind: $0)" } ?? ""
        return try await tx.raw("""
            UPDATE client_records SET account_id = NULL, bound_at = NULL WHERE account_id = \(bind: accountID) \(condition) RETURNING phone
            """).first(decodingColumn: "phone", as: String.self)
    }

    /// Binds the phone's unbound record to the account, unless the account unbound it before or has one bound: the
    /// record, when one was bound.
    package func bind(phone: String, to accountID: UUID, at now: Date, on tx: any GatehouseDatabase) async throws -> ClientRecord? {
        try await tx.raw("""
            UPDATE client_records SET account_id = \(bind: accountID), bound_at = \(bind: now)
            WHERE phone = \(bind: phone) AND account_id IS NULL
              AND (unbound_account_id IS NULL OR unbound_account_id <> \(bind: accountID))
              AND NOT EXISTS (SELECT 1 FROM client_records bound WHERE bound.account_id = \(bind: accountID))
            RETURNING phone, first_name, last_name, middle_name, email, birthday, room, base, parts
            """).first().map { try ClientRecord(row: $0) }
    }

    /// The phone's record and the account bound to it.
    package func recordAndAccount(phone: String) async throws -> (ClientRecord, UUID?)? {
        guard let row = try await database.db.raw("""
            SELECT phone, first_name, last_name, middle_name, email, birthday, room, base, parts, account_id FROM client_records WHERE phone = \(bind: phone)
            """).first() else { return nil }
        return (try ClientRecord(row: row), try row.decode(column: "account_id", as: UUID?.self))
    }

    package func record(boundTo accountID: UUID) async throws -> ClientRecord? {
        try await database.db.raw("""
            SELECT phone, first_name, last_name, middle_name, email, birthday, room, base, parts FROM client_records WHERE account_id = \(bind: accountID)
            """).first().map { try ClientRecord(row: $0) }
    }

    package func record(phone: String) async throws -> ClientRecord? {
        try await database.db.raw("""
            SELECT phone, first_name, last_name, middle_name, email, birthday, room, base, parts FROM client_records WHERE phone = \(bind: phone)
            """).first().map { try ClientRecord(row: $0) }
    }
}
