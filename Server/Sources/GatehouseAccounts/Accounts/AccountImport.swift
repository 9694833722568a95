import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Accounts brought from another system with the password hashes it kept (docs/migrating.md): one JSON object per
/// line, each checked before anything is written and refused with its line and reason; an account that is already
/// here (by its external id, email, phone or tag) is left as it is, so an import run again adds nothing twice. The
/// person signs in with their old password, and that login replaces the hash with Gatehouse's own.
package struct AccountImport: Sendable {
    /// One line of the file.
    package struct Row: Decodable, Sendable {
        package var externalId: String?
        package var email: String?
        package var emailVerified: Bool?
        package var phone: String?
        package var phoneVerified: Bool?
        package var tag: String?
        package var firstName: String?
        package var lastName: String?
        package var locale: String?
        package var createdAt: Date?
        /// The hash as the old system kept it (`ForeignPasswordHash`); with `salt`, a Firebase export's; with `scrypt`,
        /// the derived key of an scrypt whose parameters are given apart.
        package var passwordHash: String?
        package var salt: String?
        package var scrypt: ScryptParameters?
    }

    /// An scrypt hash kept as its parts (a table with `salt`, `n`, `r`, `p` columns): `passwordHash` is the derived key.
    package struct ScryptParameters: Decodable, Sendable {
        /// Base64 (standard or URL-safe, padded or not).
        package var salt: String
        package var n: Int
        package var r: Int
        package var p: Int
    }

    package struct Options: Sendable {
        package var dryRun = false
        /// The Firebase project's `hash_config`, for rows with a `salt`.
        package var firebase: ForeignPasswordHash.FirebaseScrypt?

        package init(dryRun: Bool = false, firebase: ForeignPasswordHash.FirebaseScrypt? = nil) {
            self.dryRun = dryRun
            self.firebase = firebase
        }
    }

    package enum Outcome: Sendable, Equatable {
        case imported
        /// Already here: nothing changed.
        case existing
        case refused(String)
    }

    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let rules: AccountRules
    package let audit: AuditLog
    /// Told of each batch's new accounts in its transaction (the tables kept in step with `accounts`).
    package let upkeep: [any AccountUpkeep]
    package var store: AccountStore { AccountStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, rules: AccountRules, audit: AuditLog, upkeep: [any AccountUpkeep]) {
        self.database = database
        self.clock = clock
        self.rules = rules
        self.audit = audit
        self.upkeep = upkeep
    }

    /// A line read and checked, nothing read from the database nor written: refused with why, or a row to import.
    package enum Parsed: Sendable {
        case refused(String)
        case row(Checked)
    }

    package func parse(_ text: String, options: Options) -> Parsed {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = WireDates.parseFlexible(text) else { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time")) }
            return date
        }
        guard text.utf8.count <= 16_384, !InputText.hasNUL(text) else { return .refused("a line is at most 16 KiB of text") }
        let row: Row
        do { row = try decoder.decode(Row.self, from: Data(text.utf8)) } catch { return .refused("not a JSON object of the import's fields: \(Self.reason(error))") }
        switch check(row, options: options) {
        case .success(let checked): return .row(checked)
        case .failure(let refusal): return .refused(refusal.reason)
        }
    }

    /// Rows checked, imported together, an outcome each in their order: which are here already is read with one query
    /// per kind of identifier (external id, email, phone, tag), a row that repeats an earlier row's identifier is
    /// `existing` as it would be were they imported one by one, and the new ones are written in one transaction. When
    /// that meets a constraint (another import of the same people racing this one), each is written on its own.
    package func importBatch(_ rows: [Checked], options: Options, by actor: AuditActor) async throws -> [Outcome] {
        var wanted = AccountDirectoryStore.Identifiers()
        for checked in rows { wanted.insert(checked) }
        var seen = try await AccountDirectoryStore(database: database).taken(wanted)
        var outcomes: [Outcome] = []
        var fresh: [(index: Int, checked: Checked)] = []
        for checked in rows {
            if seen.holdsAny(of: checked) {
                outcomes.append(.existing)
                continue
            }
            seen.insert(checked)
            outcomes.append(.imported)
            fresh.append((outcomes.count - 1, checked))
        }
        guard !options.dryRun, !fresh.isEmpty else { return outcomes }
        let now = clock.now()
        func write(_ rows: [(index: Int, checked: Checked)]) async throws {
            let accounts = rows.map { $0.checked.account(now: now) }
            try await database.db.withTransaction { tx in
                try await store.create(accounts, on: tx)
                for keeper in upkeep { try await keeper.created(accounts, on: tx) }
                try await audit.record(accounts.compactMap { account in
                    account.id.map { AuditEvent(.accountCreated, by: actor, account: $0, detail: ["with": "import"]) }
                }, on: tx)
            }
        }
        do {
            try await write(fresh)
        } catch where error.isConstraintViolation {
            for row in fresh {
                do { try await write([row]) } catch where error.isConstraintViolation { outcomes[row.index] = .existing }
            }
        }
        return outcomes
    }

    /// A refused row's reason.
    package struct Refusal: Error, Sendable {
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// A row as it will be written: its addresses normalised, its tag and locale checked, its hash in the form kept.
    package struct Checked: Sendable {
        package var row: Row
        package var email: String?
        package var phone: String?
        package var tag: String?
        package var locale: String
        package var hash: String

        /// The account this row makes (not yet written).
        package func account(now: Date) -> AccountModel {
            let account = AccountModel(passwordHash: hash, now: now)
            account.createdAt = min(row.createdAt ?? now, now)
            account.email = email
            account.emailConfirmedAt = email != nil && row.emailVerified == true ? now : nil
            account.phone = phone
            account.phoneVerifiedAt = phone != nil && row.phoneVerified == true ? now : nil
            account.username = tag
            account.usernameKey = tag.map(LoginName.key)
            account.firstName = row.firstName
            account.lastName = row.lastName
            account.locale = locale
            account.externalID = row.externalId
            return account
        }
    }

    /// The checks of one row, the import's and the admin API's `POST /admin/v1/accounts` alike; nothing read or written.
    package func check(_ row: Row, options: Options) -> Result<Checked, Refusal> {
        let email = row.email.flatMap(EmailAddress.normalize)
        if row.email != nil, email == nil { return .failure(Refusal("email is not an email address")) }
        let phone = row.phone.flatMap { PhoneNumber.normalize($0, defaultCountryCode: rules.defaultCountryCode) }
        if row.phone != nil, phone == nil { return .failure(Refusal("phone is not a phone number")) }
        let tag: String?
        do { tag = try row.tag.map(rules.validateTag) } catch { return .failure(Refusal("tag is not a tag (3 to 32 letters, digits, dots and underscores)")) }
        let locale: String
        do { locale = try rules.validateLocale(row.locale ?? "en") } catch { return .failure(Refusal("locale is not one Gatehouse writes in")) }
        guard email != nil || phone != nil || tag != nil else { return .failure(Refusal("a row needs an email, a phone or a tag")) }
        if let id = row.externalId, id.isEmpty || id.utf8.count > 200 || InputText.hasNUL(id) { return .failure(Refusal("externalId is 1 to 200 characters")) }
        for (name, value) in [("firstName", row.firstName), ("lastName", row.lastName)] where (value?.count ?? 0) > 100 || value.map(InputText.hasNUL) == true {
            return .failure(Refusal("\(name) is at most 100 characters"))
        }
        let hash: String
        do {
            if let text = row.passwordHash, let scrypt = row.scrypt {
                guard scrypt.n > 1, scrypt.n & (scrypt.n - 1) == 0 else { return .failure(Refusal("scrypt.n is a power of two")) }
                hash = try ForeignPasswordHash("$scrypt$ln=\(scrypt.n.trailingZeroBitCount),r=\(scrypt.r),p=\(scrypt.p)$\(scrypt.salt)$\(text)").stored
            } else if let text = row.passwordHash, let salt = row.salt {
                guard let firebase = options.firebase else { return .failure(Refusal("a hash with a salt is a Firebase export's: give the project's hash parameters")) }
                hash = try ForeignPasswordHash.firebase(hash: text, salt: salt, config: firebase).stored
            } else if let text = row.passwordHash {
                hash = try ForeignPasswordHash(text).stored
            } else {
                // No password: the person sets one through "forgot password"; nothing verifies against this (and a
                // login tried against it costs what any wrong password costs: `PasswordHasher.verify`).
                hash = PasswordHasher.unusable
            }
        } catch let refused as ForeignPasswordHash.Refused {
            return .failure(Refusal("passwordHash: \(refused.description)"))
        } catch {
            return .failure(Refusal("passwordHash: unreadable"))
        }
        return .success(Checked(row: row, email: email, phone: phone, tag: tag, locale: locale, hash: hash))
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            return (context.codingPath.map(\.stringValue).joined(separator: ".") + " " + context.debugDescription).trimmingCharacters(in: .whitespaces)
        default:
            return "unreadable JSON"
        }
    }

    /// What a file did, or (a dry run) would do.
    package struct Report: Sendable {
        package var imported = 0
        package var existing = 0
        /// The first hundred refusals, by line.
        package var refused: [(line: Int, reason: String)] = []
        package var refusedCount = 0
        package var lines = 0
    }

    /// A file read a piece at a time, whatever its length, in bounded memory: the CLI feeds it the file's pieces, the
    /// admin API the request body's. A line of its own `{"hashConfig": {…}}` (Firebase's `hash_config`, as its console
    /// shows it) gives the Firebase parameters of the lines after it.
    package struct Reader: Sendable {
        package let service: AccountImport
        package var options: Options
        package let actor: AuditActor
        package private(set) var report = Report()
        private var pending: [UInt8] = []
        /// Heard every thousand lines.
        private let progress: @Sendable (Int) -> Void
        /// A line is kept up to one byte past what `importLine` takes, so that a longer one is refused, not read in full.
        package static let maxLineBytes = 16_385

        package init(_ service: AccountImport, options: Options, by actor: AuditActor, progress: @escaping @Sendable (Int) -> Void = { _ in }) {
            self.service = service
            self.options = options
            self.actor = actor
            self.progress = progress
        }

        package mutating func feed(_ bytes: some Sequence<UInt8>) async throws {
            for byte in bytes {
                if byte == 0x0A {
                    let line = pending
                    pending.removeAll(keepingCapacity: true)
                    try await take(line)
                } else if pending.count < Self.maxLineBytes {
                    pending.append(byte)
                }
            }
        }

        package mutating func finish() async throws -> Report {
            if !pending.isEmpty {
                let line = pending
                pending = []
                try await take(line)
            }
            try await flush()
            report.refused.sort { $0.line < $1.line }
            return report
        }

        private mutating func take(_ bytes: [UInt8]) async throws {
            report.lines += 1
            if report.lines % 1_000 == 0 { progress(report.lines) }
            let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return }
            if text.hasPrefix("{\"hashConfig\"") {
                guard let why = setHashConfig(text) else { return }
                return count(.refused(why), line: report.lines)
            }
            // A longer line was cut at `maxLineBytes`: `parse` refuses it by its length.
            switch service.parse(text, options: options) {
            case .refused(let reason): count(.refused(reason), line: report.lines)
            case .row(let checked):
                batch.append((report.lines, checked))
                if batch.count >= Self.batchSize { try await flush() }
            }
        }

        /// Rows written in one transaction: a million-row file is ten thousand commits, not a million, and a batch stays
        /// far inside the transaction's deadline (`GATEHOUSE_DB_QUERY_TIMEOUT_SECONDS`) on a busy machine.
        package static let batchSize = 100
        private var batch: [(line: Int, checked: Checked)] = []

        private mutating func flush() async throws {
            guard !batch.isEmpty else { return }
            let rows = batch
            batch.removeAll(keepingCapacity: true)
            let outcomes = try await service.importBatch(rows.map(\.checked), options: options, by: actor)
            for (row, outcome) in zip(rows, outcomes) { count(outcome, line: row.line) }
        }

        private mutating func count(_ outcome: Outcome, line: Int) {
            switch outcome {
            case .imported: report.imported += 1
            case .existing: report.existing += 1
            case .refused(let reason):
                report.refusedCount += 1
                if report.refused.count < 100 { report.refused.append((line, reason)) }
            }
        }

        /// Firebase's `hash_config`: `algorithm` SCRYPT, `base64_signer_key`, `base64_salt_separator`, `rounds`, `mem_cost`.
        private mutating func setHashConfig(_ text: String) -> String? {
            struct Line: Decodable {
                struct Config: Decodable {
                    var algorithm: String
                    var base64_signer_key: String
                    var base64_salt_separator: String
                    var rounds: Int
                    var mem_cost: Int
                }
                var hashConfig: Config
            }
            guard let line = try? JSONDecoder().decode(Line.self, from: Data(text.utf8)), line.hashConfig.algorithm == "SCRYPT",
                  let key = Data(base64Encoded: line.hashConfig.base64_signer_key), let separator = Data(base64Encoded: line.hashConfig.base64_salt_separator)
            else { return "hashConfig is Firebase's: algorithm SCRYPT, base64_signer_key, base64_salt_separator, rounds, mem_cost" }
            options.firebase = .init(signerKey: Array(key), saltSeparator: Array(separator), rounds: line.hashConfig.rounds, memoryCost: line.hashConfig.mem_cost)
            return nil
        }
    }
}
