import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Client records: imported in bulk by the business (`gatehouse clients import`), bound to the
/// account whose verified phone they carry, read for `GET /api/users/user`.
package struct ClientRecords: Sendable {
    package let database: DatabaseProvider
    private var store: ClientRecordStore { ClientRecordStore(database: database) }
    package let clock: GatehouseClock
    package let defaultCountryCode: String

    /// Most rows one import takes (`GATEHOUSE_CLIENT_IMPORT_MAX_ROWS`).
    package let maxRows: Int

    /// Told of every write to a bound record, which the session lookup reads with its account.
    package let sessions: SessionService

    package init(database: DatabaseProvider, clock: GatehouseClock, sessions: SessionService, defaultCountryCode: String, maxRows: Int = 100_000) {
        self.database = database
        self.clock = clock
        self.sessions = sessions
        self.defaultCountryCode = defaultCountryCode
        self.maxRows = maxRows
    }

    package typealias Format = ClientRecordFile.Format
    package typealias Refusal = ClientRecordFile.Refusal

    /// What an import did: rows created, changed and left as they were, and every refused row
    /// with its line and why. Nothing of a file is applied when it cannot be applied whole.
    package struct Report: Codable, Sendable, Equatable {
        package struct Refusal: Codable, Sendable, Equatable {
            package var line: Int
            package var reason: String
        }
        package var created = 0
        package var updated = 0
        package var unchanged = 0
        package var refused: [Refusal] = []
    }

    // MARK: Importing

    /// Imports a file: every row checked first; the good ones applied in one transaction (a
    /// record of the same phone is replaced by the file's data, its binding kept; the same data
    /// changes nothing), with the import's event in the audit trail; the others reported with
    /// their line. A phone twice in one file refuses its later rows.
    package func importFile(_ text: String, format: Format, by actor: AuditActor, dryRun: Bool = false) async throws -> Report {
        var report = Report()
        var good: [ClientRecord] = []
        var seen: [String: Int] = [:]
        let rows = ClientRecordFile(defaultCountryCode: defaultCountryCode).parse(text, format: format, limit: maxRows + 1)
        guard rows.count <= maxRows else {
            return Report(refused: [.init(line: rows[maxRows].line, reason: "more than \(maxRows) rows: split the file")])
        }
        for (line, result) in rows {
            switch result {
            case .failure(let refusal): report.refused.append(.init(line: line, reason: refusal.reason))
            case .success(let record):
                if let first = seen[record.phone] {
                    report.refused.append(.init(line: line, reason: "phone \(record.phone) is on line \(first) already"))
                    continue
                }
                seen[record.phone] = line
                good.append(record)
            }
        }
        let (records, refusedCount) = (good, report.refused.count)
        let applied: Report
        if !dryRun {
            applied = try await database.db.withTransaction { tx -> Report in
                let counts = try await apply(records, on: tx)
                try await AuditLog(database: database, clock: clock).record(AuditEvent(
                    .clientsImported, by: actor, account: nil,
                    detail: ["created": String(counts.created), "updated": String(counts.updated), "unchanged": String(counts.unchanged),
                             "refused": String(refusedCount), "format": format.rawValue]), on: tx)
                return counts
            }
        } else {
            // A dry run reads what each row would do and writes nothing: it takes no write lock (on
            // SQLite, the one writer), so a preview of a large file keeps no one waiting. The rows
            // are distinct phones, so each one's outcome is what an import would do.
            applied = try await apply(records, writing: false, on: database.db)
            // Nothing changed, but the file was read: who looked, and at what.
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .clientsPreviewed, by: actor, account: nil,
                detail: ["created": String(applied.created), "updated": String(applied.updated), "unchanged": String(applied.unchanged),
                         "refused": String(refusedCount), "format": format.rawValue]))
        }
        report.created = applied.created
        report.updated = applied.updated
        report.unchanged = applied.unchanged
        return report
    }

    /// What writing one record did.
    package enum Outcome: String, Sendable {
        case created, updated, unchanged
    }

    /// Writes checked records in the caller's transaction: a new phone is created, a known one
    /// takes the new data (its binding kept), the same data changes nothing. `writing` false:
    /// only counts what it would do.
    private func apply(_ records: [ClientRecord], writing: Bool = true, on tx: any GatehouseDatabase) async throws -> Report {
        let now = clock.now()
        var counts = Report()
        for record in records {
            let parts = String(decoding: try Self.encoder.encode(record.parts), as: UTF8.self)
            switch try await store.compare(record, parts: parts, on: tx) {
            case .same:
                counts.unchanged += 1
            case .different:
                guard writing else { counts.updated += 1; continue }
                if let bound = try await store.update(record, parts: parts, at: now, on: tx) { try await sessions.accountChanged(bound, on: tx) }
                counts.updated += 1
            case .absent:
                guard writing else { counts.created += 1; continue }
                try await store.insert(record, parts: parts, at: now, on: tx)
                counts.created += 1
            }
        }
        return counts
    }

    // MARK: One at a time (the admin API)

    /// Checks and writes one record, with a `client.saved` event when it changed; what it did.
    package func save(_ raw: ClientRecord, by actor: AuditActor, origin: AuditOrigin) async throws -> Outcome {
        let record: ClientRecord
        switch ClientRecordFile(defaultCountryCode: defaultCountryCode).check(raw) {
        case .failure(let refusal): throw GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [refusal.reason]))
        case .success(let checked): record = checked
        }
        return try await database.db.withTransaction { tx in
            let counts = try await apply([record], on: tx)
            let outcome: Outcome = counts.created == 1 ? .created : counts.updated == 1 ? .updated : .unchanged
            if outcome != .unchanged {
                let bound = try await store.boundAccount(phone: record.phone, on: tx)
                try await AuditLog(database: database, clock: clock).record(AuditEvent(
                    .clientSaved, by: actor, account: bound, origin: origin,
                    detail: ["phone": maskedForAudit(record.phone), "outcome": outcome.rawValue]), on: tx)
            }
            return outcome
        }
    }

    /// Deletes the record of a phone (bound or not: it is the business's), with its event; false
    /// when there is none.
    package func delete(phone: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        guard let phone = PhoneNumber.normalize(phone, defaultCountryCode: defaultCountryCode) else { return false }
        return try await database.db.withTransaction { tx in
            guard let deleted = try await store.delete(phone: phone, on: tx) else { return false }
            let bound = deleted.account
            if let bound { try await sessions.accountChanged(bound, on: tx) }
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .clientDeleted, by: actor, account: bound, origin: origin, detail: ["phone": maskedForAudit(phone)]), on: tx)
            return true
        }
    }

    /// Unbinds the record bound to the account (an operator's action: it was bound to the wrong
    /// person, a phone number passed to someone else): the record stays, the account keeps what it
    /// took from it, and the two are never bound again by the account's logins; false when none
    /// is bound.
    package func unbind(accountID: UUID, reason: String, by actor: AuditActor, origin: AuditOrigin) async throws -> Bool {
        try await database.db.withTransaction { tx in
            guard let phone = try await store.unbind(accountID: accountID, on: tx) else { return false }
            try await sessions.accountChanged(accountID, on: tx)
            try await AuditLog(database: database, clock: clock).record(AuditEvent(
                .clientUnbound, by: actor, account: accountID, origin: origin,
                detail: ["phone": maskedForAudit(phone), "reason": reason]), on: tx)
            return true
        }
    }

    /// The record of a phone and the account bound to it, as a business system reads it through
    /// the admin API: the read is in the audit trail (`client.read`), found or not.
    package func read(phone: String, by actor: AuditActor, origin: AuditOrigin) async throws -> (ClientRecord, UUID?)? {
        let found = try await recordAndAccount(phone: phone)
        let shown = PhoneNumber.normalize(phone, defaultCountryCode: defaultCountryCode) ?? String(phone.prefix(20))
        try await AuditLog(database: database, clock: clock).record(AuditEvent(
            .clientRead, by: actor, account: found?.1, origin: origin, detail: ["phone": maskedForAudit(shown), "found": found == nil ? "no" : "yes"]))
        return found
    }

    /// The record of a phone and the account bound to it (operators' and the admin API's reading).
    package func recordAndAccount(phone: String) async throws -> (ClientRecord, UUID?)? {
        guard let phone = PhoneNumber.normalize(phone, defaultCountryCode: defaultCountryCode) else { return nil }
        return try await store.recordAndAccount(phone: phone)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    // MARK: Binding and reading

    /// Binds the unbound record of `phone` (a verified one: the caller's rule) to the account, in
    /// the caller's transaction; the record, when there was one to bind. A record already bound
    /// to another account stays where it is.
    package func bind(phone: String, to accountID: UUID, on tx: any GatehouseDatabase) async throws -> ClientRecord? {
        guard let record = try await store.bind(phone: phone, to: accountID, at: clock.now(), on: tx) else { return nil }
        try await sessions.accountChanged(accountID, on: tx)
        return record
    }

    /// Unbinds the account's record when its phone is not `phone` (the account's verified phone, nil
    /// when it has none), in the caller's transaction: a record is the phone's, and a number the
    /// account gave up is somebody else's next. Not an operator's unbinding: the same account
    /// binds it again should it verify that phone again. The phone of the record unbound, if any.
    package func unbindStale(accountID: UUID, keeping phone: String?, on tx: any GatehouseDatabase) async throws -> String? {
        guard let unbound = try await store.unbindStale(accountID: accountID, keeping: phone, on: tx) else { return nil }
        try await sessions.accountChanged(accountID, on: tx)
        return unbound
    }

    /// The record bound to the account, if any.
    package func record(of accountID: UUID) async throws -> ClientRecord? {
        try await store.record(boundTo: accountID)
    }

    /// The record of a phone, bound or not (operators' reading).
    package func record(phone: String) async throws -> ClientRecord? {
        guard let phone = PhoneNumber.normalize(phone, defaultCountryCode: defaultCountryCode) else { return nil }
        return try await store.record(phone: phone)
    }
}

/// Client records (migration 020): keyed by phone, bound to at most one account, an account to at most one.
package struct M020CreateClientRecords: SQLMigration {
    package var name: String { "020_CreateClientRecords" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("client_records")
            .field("phone", .string, .identifier(auto: false))
            .field("first_name", .string)
            .field("last_name", .string)
            .field("middle_name", .string)
            .field("email", .string)
            .field("birthday", .string)
            .field("room", .string)
            .field("base", .string)
            .field("parts", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .setNull))
            .field("bound_at", .datetime)
            .field("created_at", .datetime, .required)
            .field("updated_at", .datetime, .required)
            .unique(on: "account_id", name: "uq_client_records_account")
            .create()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("client_records").delete()
    }

    package init() {}
}

/// A file of client records as the business sends it: JSON lines, or CSV with a header row.
/// Reading it needs no database, so a file is checked whole before anything is applied.
package struct ClientRecordFile: Sendable {
    package let defaultCountryCode: String
    private static let maxText = 200

    package init(defaultCountryCode: String) {
        self.defaultCountryCode = defaultCountryCode
    }

    package enum Format: String, Sendable, CaseIterable { case jsonLines = "jsonl", csv }

    // MARK: Reading a file

    /// Each row of a file, by its line number: a checked record (phone in E.164, date as
    /// `yyyy-MM-dd`), or why it is refused.
    /// The rows of a file, at most `limit` of them (a longer file is cut there: its caller refuses it).
    package func parse(_ text: String, format: Format, limit: Int = .max) -> [(line: Int, result: Result<ClientRecord, Refusal>)] {
        switch format {
        case .jsonLines:
            var rows: [(Int, Result<ClientRecord, Refusal>)] = []
            var index = 0
            for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
                index += 1
                guard rows.count < limit else { break }
                let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
                if line.isEmpty { continue }
                guard let record = try? JSONDecoder().decode(ClientRecord.self, from: Data(line.utf8)) else {
                    rows.append((index, .failure(Refusal("not a JSON object with a phone, and strings, a birthday and parts of the documented shape"))))
                    continue
                }
                rows.append((index, check(record)))
            }
            return rows
        case .csv:
            // The header and the rows asked for.
            let table = Self.csvRows(text, limit: limit == .max ? .max : limit + 1)
            guard let header = table.first?.fields.map({ $0.trimmingCharacters(in: .whitespaces) }) else { return [] }
            let known = ["phone", "firstName", "lastName", "middleName", "email", "birthday", "room", "base", "parts"]
            if let unknown = header.first(where: { !known.contains($0) }) {
                return [(table[0].line, .failure(Refusal("unknown column '\(unknown.prefix(40))': the columns are \(known.joined(separator: ", "))")))]
            }
            guard header.contains("phone") else { return [(table[0].line, .failure(Refusal("no phone column")))] }
            return table.dropFirst().filter { !$0.fields.allSatisfy(\.isEmpty) }.map { row in
                guard row.fields.count == header.count else {
                    return (row.line, .failure(Refusal("\(row.fields.count) fields where the header has \(header.count)")))
                }
                var values: [String: String] = [:]
                for (name, value) in zip(header, row.fields) where !value.isEmpty { values[name] = value }
                var parts: [ClientPart] = []
                if let text = values["parts"] {
                    guard let decoded = try? JSONDecoder().decode([ClientPart].self, from: Data(text.utf8)) else {
                        return (row.line, .failure(Refusal("parts is not a JSON array of {domainId, name, forfeit, isBanned, discount}")))
                    }
                    parts = decoded
                }
                let record = ClientRecord(phone: values["phone"] ?? "", firstName: values["firstName"], lastName: values["lastName"],
                                          middleName: values["middleName"], email: values["email"], birthday: values["birthday"],
                                          room: values["room"], base: values["base"], parts: parts)
                return (row.line, check(record))
            }
        }
    }

    package struct Refusal: Error, Sendable, Equatable {
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The record with its phone normalised and its fields checked.
    package func check(_ raw: ClientRecord) -> Result<ClientRecord, Refusal> {
        var record = raw
        guard let phone = PhoneNumber.normalize(raw.phone, defaultCountryCode: defaultCountryCode) else {
            return .failure(Refusal("phone '\(raw.phone.prefix(40))' is not a phone number"))
        }
        record.phone = phone
        func clean(_ value: String?, _ name: String) throws -> String? {
            guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            guard value.count <= Self.maxText, !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw Refusal("\(name) is longer than \(Self.maxText) characters or holds control characters")
            }
            return value
        }
        do {
            record.firstName = try clean(raw.firstName, "firstName")
            record.lastName = try clean(raw.lastName, "lastName")
            record.middleName = try clean(raw.middleName, "middleName")
            record.room = try clean(raw.room, "room")
            record.base = try clean(raw.base, "base")
            if let email = try clean(raw.email, "email") {
                guard let normalized = EmailAddress.normalize(email) else { throw Refusal("email '\(email.prefix(60))' is not an email address") }
                record.email = normalized
            }
            if let birthday = try clean(raw.birthday, "birthday") {
                guard let date = WireDates.parseCalendarDate(birthday) ?? WireDates.parseFlexible(birthday) else {
                    throw Refusal("birthday '\(birthday.prefix(40))' is not a date (yyyy-MM-dd or dd.MM.yyyy)")
                }
                record.birthday = WireDates.calendarDateString(from: date)
            }
            guard raw.parts.count <= 100 else { throw Refusal("more than 100 parts") }
            for part in raw.parts {
                guard !part.domainId.isEmpty, part.domainId.count <= Self.maxText, part.name.count <= Self.maxText else {
                    throw Refusal("a part needs a domainId, and its texts at most \(Self.maxText) characters")
                }
                guard part.forfeit.isFinite, part.forfeit >= 0, part.forfeit < 1e12 else { throw Refusal("a part's forfeit is not an amount") }
                guard (0...100).contains(part.discount) else { throw Refusal("a part's discount is not a percentage (0–100)") }
            }
            guard Set(raw.parts.map(\.domainId)).count == raw.parts.count else { throw Refusal("parts name a domainId twice") }
        } catch let refusal as Refusal {
            return .failure(refusal)
        } catch {
            return .failure(Refusal("\(error)"))
        }
        return .success(record)
    }

    /// RFC 4180 rows (quoted fields may hold commas, doubled quotes and line breaks), with the
    /// line each starts on.
    /// The rows of a CSV text (RFC 4180: quoted fields, doubled quotes, CRLF or LF), read in place —
    /// never a copy of the text as an array of characters (16 bytes each) — and no more than
    /// `limit` of them: a file of too many rows is refused without being read whole.
    static func csvRows(_ text: String, limit: Int = .max) -> [(line: Int, fields: [String])] {
        var rows: [(Int, [String])] = []
        var fields: [String] = [], field = "", quoted = false, line = 1, rowLine = 1
        var iterator = text.makeIterator()
        var pending: Character? = nil
        // "\r\n" is one character to Swift.
        while rows.count < limit, let c = pending ?? iterator.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    if let next = iterator.next() {
                        if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                    } else { quoted = false }
                } else if c == "\n" || c == "\r\n" {
                    line += 1
                    field.append("\n")
                } else {
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.isEmpty: quoted = true
            case ",": fields.append(field); field = ""
            case "\n", "\r\n":
                fields.append(field)
                rows.append((rowLine, fields))
                fields = []; field = ""
                line += 1
                rowLine = line
            default: field.append(c)
            }
        }
        guard rows.count < limit else { return rows }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(field)
            rows.append((rowLine, fields))
        }
        return rows
    }

}
