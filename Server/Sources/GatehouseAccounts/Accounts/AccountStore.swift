import FluentKit
import Foundation
import GatehouseFoundation

/// The `accounts` table: every query the account services make of it, in one place (DESIGN §7:
/// stores own the queries; services hand surfaces values). A proven address names an account, an
/// unproven one is only a claim (docs/security.md, "Claims"). `db` is a transaction's database
/// when the read belongs to one.
package struct AccountStore: Sendable {
    package let database: DatabaseProvider

    package init(database: DatabaseProvider) {
        self.database = database
    }

    /// A new account, in the caller's transaction (a sign-up, or Sign To Login's enrolment).
    package func create(_ account: AccountModel, on db: any Database) async throws {
        try await account.create(on: db)
    }

    package func row(id: UUID, on db: (any Database)? = nil) async throws -> AccountModel? {
        try await AccountModel.find(id, on: db ?? database.db)
    }

    /// The account whose confirmed email (or verified phone) this is.
    package func owner(of destination: Destination) async throws -> AccountModel? {
        switch destination {
        case .email(let email):
            try await AccountModel.query(on: database.db).filter(\.$email == email).filter(\.$emailConfirmedAt != nil).first()
        case .phone(let phone):
            try await AccountModel.query(on: database.db).filter(\.$phone == phone).filter(\.$phoneVerifiedAt != nil).first()
        }
    }

    /// Another account holding `destination` unconfirmed (a claim), inside the caller's transaction.
    package func claimant(of destination: Destination, except accountID: UUID?, on tx: any Database) async throws -> AccountModel? {
        var query = AccountModel.query(on: tx)
        switch destination {
        case .email(let email): query = query.filter(\.$email == email).filter(\.$emailConfirmedAt == nil)
        case .phone(let phone): query = query.filter(\.$phone == phone).filter(\.$phoneVerifiedAt == nil)
        }
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.first()
    }

    /// The account with this login name or tag (`key`: as `LoginName.key` folds it).
    package func named(_ key: String) async throws -> AccountModel? {
        try await AccountModel.query(on: database.db).filter(\.$usernameKey == key).first()
    }

    package func isNameTaken(_ key: String, except accountID: UUID? = nil) async throws -> Bool {
        var query = AccountModel.query(on: database.db).filter(\.$usernameKey == key)
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.count() > 0
    }

    /// Whether any account holds the address, proven or not.
    package func isEmailTaken(_ email: String, except accountID: UUID? = nil) async throws -> Bool {
        var query = AccountModel.query(on: database.db).filter(\.$email == email)
        if let accountID { query = query.filter(\.$id != accountID) }
        return try await query.count() > 0
    }

    package func isPhoneTaken(_ phone: String) async throws -> Bool {
        try await AccountModel.query(on: database.db).filter(\.$phone == phone).count() > 0
    }
}
