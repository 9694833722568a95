import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// The business's client record follows an account's verified phone (docs/operators.md): bound
/// when the phone is proven, unbound when it stops being the account's, each with its event in
/// the caller's transaction.
package struct ClientBinding: Sendable {
    package let clients: ClientRecords
    package let audit: AuditLog

    package init(clients: ClientRecords, audit: AuditLog) {
        self.clients = clients
        self.audit = audit
    }

    /// Binds the client record of the account's verified phone, if one is unbound, in the
    /// caller's transaction, with its event; the record.
    @discardableResult
    package func bindClientRecord(_ account: AccountModel, origin: AuditOrigin, on tx: any GatehouseDatabase) async throws -> ClientRecord? {
        guard let phone = account.phone, account.phoneVerifiedAt != nil, let id = account.id,
              let record = try await clients.bind(phone: phone, to: id, on: tx) else { return nil }
        try await audit.record(AuditEvent(.clientBound, by: .system(nil), account: id, origin: origin, detail: ["phone": maskedForAudit(phone)]), on: tx)
        return record
    }

    /// The client record follows the account's verified phone, in the caller's transaction: a
    /// record of a phone the account no longer has verified is unbound (`client.unbound`), and the
    /// record of its verified phone, if one is free, is bound. Called wherever the phone or its
    /// verification changes.
    package func followPhone(_ account: AccountModel, origin: AuditOrigin, on tx: any GatehouseDatabase) async throws {
        guard let id = account.id else { return }
        let current = account.phoneVerifiedAt != nil ? account.phone : nil
        if let old = try await clients.unbindStale(accountID: id, keeping: current, on: tx) {
            try await audit.record(AuditEvent(.clientUnbound, by: .system(nil), account: id, origin: origin,
                                              detail: ["phone": maskedForAudit(old), "reason": "the account's verified phone changed"]), on: tx)
        }
        try await bindClientRecord(account, origin: origin, on: tx)
    }
}
