import Crypto
import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// One money-moving call under an `Idempotency-Key` (docs/wallet.md, "Idempotency"): who made
/// it, the key, and a fingerprint of what was asked (method, path and body), so that the same
/// key with another request is told apart from a retry.
package struct IdempotentCall: Sendable {
    package var account: UUID
    package var key: String
    package var fingerprint: String
    /// The status of a successful answer.
    package var successStatus: Int

    /// The key as sent: 1–255 visible ASCII characters.
    package static func validKey(_ raw: String?) -> String? {
        guard let raw, (1...255).contains(raw.utf8.count), raw.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { return nil }
        return raw
    }

    package static func fingerprint(method: String, path: String, body: Data) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        hasher.update(data: body)
        return Array(hasher.finalize()).hexString
    }

    package init(account: UUID, key: String, fingerprint: String, successStatus: Int) {
        self.account = account
        self.key = key
        self.fingerprint = fingerprint
        self.successStatus = successStatus
    }
}

/// An account's key.
package struct KeyRef: Hashable, Sendable {
    package var account: UUID
    package var key: String
}

extension IdempotentCall {
    package var ref: KeyRef { KeyRef(account: account, key: key) }
}

/// A stored answer: what the first call answered, replayed byte for byte.
package struct StoredAnswer: Sendable, Equatable {
    package var status: Int
    package var body: Data

    package init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// What a money-moving call comes to: done now (with the answer stored for its key, which is
/// what the caller is told), or the answer to the first call with its key.
package enum Idempotent<Value: Sendable>: Sendable {
    case fresh(Value, answer: StoredAnswer)
    case replay(StoredAnswer)
}

/// The remembered keys. A call claims its key in the transaction that moves the money and
/// stores its answer there too, so the key and the money commit or roll back together: an
/// acknowledged payment is remembered, and a payment that never committed leaves no key behind.
/// A concurrent duplicate blocks on the first one's uncommitted key (PostgreSQL waits on the
/// unique key; SQLite has one writer) and then replays its answer.
package struct IdempotencyKeys: Sendable {
    package let clock: GatehouseClock
    package let ttl: TimeInterval

    package static var reused: GatehouseError {
        GatehouseError(.unprocessable, .idempotencyKeyReused, LocalizedText("error.idempotencyKeyReused"), field: V1.Wallet.idempotencyKeyHeader)
    }

    /// Claims the key in `tx`; answers the stored answer when the key was used before with the
    /// same request (422 `idempotency_key_reused` with another). A key past its time is forgotten.
    package func claim(_ call: IdempotentCall, on tx: any GatehouseDatabase) async throws -> StoredAnswer? {
        let now = clock.now()
        let claimed = try await tx.raw("""
            INSERT INTO idempotency_keys (account_id, key, fingerprint, status, body, created_at)
            VALUES (\(bind: call.account), \(bind: call.key), \(bind: call.fingerprint), 0, '', \(bind: now))
            ON CONFLICT (account_id, key) DO NOTHING RETURNING status
            """).first()
        if claimed != nil { return nil }
        let forgottenBefore = now.addingTimeInterval(-ttl)
        // Forgotten (past its time, not yet purged): the key starts over. Only one call takes it
        // over: the condition is checked again under the row's lock, so a second call that saw
        // the old row waits, finds it taken, and replays the first one's answer.
        if try await tx.raw("""
            UPDATE idempotency_keys SET fingerprint = \(bind: call.fingerprint), status = 0, body = '', created_at = \(bind: now)
            WHERE account_id = \(bind: call.account) AND key = \(bind: call.key) AND created_at < \(bind: forgottenBefore) RETURNING key
            """).first() != nil {
            return nil
        }
        guard let row = try await tx.raw("""
            SELECT fingerprint, status, body FROM idempotency_keys WHERE account_id = \(bind: call.account) AND key = \(bind: call.key)
            """).first() else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
        guard try row.decode(column: "fingerprint", as: String.self) == call.fingerprint else { throw Self.reused }
        let status = try row.decode(column: "status", as: Int.self)
        // Status 0 is a claim in this transaction's own snapshot: cannot be another's (it would have waited).
        guard status != 0 else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
        return StoredAnswer(status: status, body: Data(try row.decode(column: "body", as: String.self).utf8))
    }

    /// Stores the answer of a call that claimed its key, in the same transaction.
    package func complete(_ call: IdempotentCall, _ answer: StoredAnswer, on tx: any GatehouseDatabase) async throws {
        var writes = CombinedWrites(for: tx)
        complete([(call, answer)], into: &writes)
        try await writes.run(on: tx)
    }

    /// Stores the answers of calls that claimed their keys, in one statement added to a group commit's writes.
    package func complete(_ answers: [(call: IdempotentCall, answer: StoredAnswer)], into writes: inout CombinedWrites) {
        guard !answers.isEmpty else { return }
        var rows = RowSet(count: answers.count)
        rows.add("account_id", "uuid", answers.map(\.call.account))
        rows.add("key", "text", answers.map(\.call.key))
        rows.add("status", "bigint", answers.map { Int64($0.answer.status) })
        rows.add("body", "text", answers.map { String(decoding: $0.answer.body, as: UTF8.self) })
        writes.add(rows.update("idempotency_keys", matching: ["account_id", "key"], postgres: writes.postgres))
    }

    /// Claims the keys of a batch's calls (all different) in one statement, in key order; answers
    /// those claimed. A key used before is not claimed: its call goes alone through `claim`,
    /// which replays, refuses or takes over a forgotten key.
    package func claimNew(_ calls: [IdempotentCall], on tx: any GatehouseDatabase) async throws -> Set<KeyRef> {
        guard !calls.isEmpty else { return [] }
        let sorted = calls.sorted { ($0.account, $0.key) < ($1.account, $1.key) }
        var rows = RowSet(count: sorted.count)
        rows.add("account_id", "uuid", sorted.map(\.account))
        rows.add("key", "text", sorted.map(\.key))
        rows.add("fingerprint", "text", sorted.map(\.fingerprint))
        var claimed: Set<KeyRef> = []
        for row in try await tx.preparedRows("""
            \(rows.insert(into: "idempotency_keys", constants: [("status", "0"), ("body", "''"), ("created_at", "\(bind: clock.now())")], postgres: tx.isPostgres))
            ON CONFLICT (account_id, key) DO NOTHING RETURNING account_id, key
            """) {
            claimed.insert(KeyRef(account: try row.decode(column: "account_id", as: UUID.self), key: try row.decode(column: "key", as: String.self)))
        }
        return claimed
    }

    /// The claim of the keys of a batch's calls (all different) with their answers, in key order,
    /// as a part of one statement (PostgreSQL; `TransferBatcher`'s `writeAtOnce`): it answers a
    /// row per key claimed, none for a key used before (the statement must then fail).
    package func claimsAnswered(_ answers: [(call: IdempotentCall, answer: StoredAnswer)]) -> SQLQueryString {
        let sorted = answers.sorted { ($0.call.account, $0.call.key) < ($1.call.account, $1.call.key) }
        var rows = RowSet(count: sorted.count)
        rows.add("account_id", "uuid", sorted.map(\.call.account))
        rows.add("key", "text", sorted.map(\.call.key))
        rows.add("fingerprint", "text", sorted.map(\.call.fingerprint))
        rows.add("status", "bigint", sorted.map { Int64($0.answer.status) })
        rows.add("body", "text", sorted.map { String(decoding: $0.answer.body, as: UTF8.self) })
        return """
            \(rows.insert(into: "idempotency_keys", constants: [("created_at", "\(bind: clock.now())")], postgres: true))
            ON CONFLICT (account_id, key) DO NOTHING RETURNING 1
            """
    }

    /// Remembers a refusal (`insufficient_funds`, a limit, an unknown recipient) after its
    /// transaction rolled back, so a retry answers it again, as Stripe does. When another call
    /// with the key got there first, answers what that one stored instead.
    package func remember(_ call: IdempotentCall, _ answer: StoredAnswer, on db: any GatehouseDatabase) async throws -> StoredAnswer? {
        try await db.withTransaction { tx in
            if let stored = try await self.claim(call, on: tx) { return stored }
            try await self.complete(call, answer, on: tx)
            return nil
        }
    }

    /// Forgets keys past their time.
    package func purgeExpired(on db: any GatehouseDatabase) async throws {
        try await db.raw("DELETE FROM idempotency_keys WHERE created_at < \(bind: clock.now().addingTimeInterval(-ttl))").run()
    }

    package init(clock: GatehouseClock, ttl: TimeInterval) {
        self.clock = clock
        self.ttl = ttl
    }
}
