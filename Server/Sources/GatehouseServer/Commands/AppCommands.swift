import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin

/// `gatehouse apps …`: an operator registers, lists, disables, enables the Sign To Login
/// service's apps and rotates their keys, straight on the database (no server needed).
public enum AppCommands {
    /// What the commands print: the app, and its key when one was just made.
    public struct Output: Encodable, Sendable {
        public var id: UUID
        public var name: String
        public var bundleId: String
        public var email: String
        public var website: String?
        public var enabled: Bool
        public var keyHint: String
        public var owner: String?
        /// Only right after `create` and `rotate`: the key, never shown again.
        public var apikey: String?
    }

    /// A refusal, in words for a terminal.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func create(configuration: GatehouseConfiguration, name: String, bundleID: String, email: String, website: String?,
                              iconPath: String?, ownerEmail: String?) async throws -> Output {
        try await withApps(configuration) { apps, accounts in
            var owner: UUID?
            if let ownerEmail {
                guard let address = EmailAddress.normalize(ownerEmail), let account = try await accounts.owner(of: .email(address)) else {
                    throw Failure(description: "no account has the confirmed email \(ownerEmail)")
                }
                owner = account.id
            }
            var icon: (String, Data)?
            if let iconPath {
                let types = ["png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "webp": "image/webp"]
                guard let type = types[URL(fileURLWithPath: iconPath).pathExtension.lowercased()] else {
                    throw Failure(description: "--icon must be a .png, .jpg or .webp file")
                }
                guard let data = FileManager.default.contents(atPath: iconPath) else { throw Failure(description: "cannot read \(iconPath)") }
                icon = (type, data)
            }
            var (row, key) = try await apps.create(NewApp(name: name, bundleId: bundleID, email: email, website: website), owner: owner, by: .system(nil))
            if let (type, data) = icon { row = try await apps.setIcon(row, contentType: type, bytes: data) }
            return try await output(row, accounts, key: key)
        }
    }

    public static func list(configuration: GatehouseConfiguration) async throws -> [Output] {
        try await withApps(configuration) { apps, accounts in
            var all: [Output] = []
            for row in try await apps.list(owner: nil) { all.append(try await output(row, accounts)) }
            return all
        }
    }

    public static func setEnabled(configuration: GatehouseConfiguration, idOrKey: String, enabled: Bool) async throws -> Output {
        try await withApps(configuration) { apps, accounts in
            let row = try await apps.update(apps.find(idOrKey: idOrKey), AppUpdate(enabled: enabled), by: .system(nil))
            return try await output(row, accounts)
        }
    }

    public static func rotate(configuration: GatehouseConfiguration, idOrKey: String) async throws -> Output {
        try await withApps(configuration) { apps, accounts in
            let (row, key) = try await apps.rotateKey(apps.find(idOrKey: idOrKey), by: .system(nil))
            return try await output(row, accounts, key: key)
        }
    }

    private static func output(_ row: AppRecord, _ accounts: AccountStore, key: String? = nil) async throws -> Output {
        var owner: String?
        if let id = row.ownerID { owner = try await accounts.row(id: id)?.email }
        return Output(id: row.id, name: row.name, bundleId: row.bundleID, email: row.email, website: row.website, enabled: row.enabled,
                      keyHint: row.keyHint, owner: owner, apikey: key)
    }

    /// Runs `body` on the apps service of a server built from `configuration`; a refusal becomes
    /// a ``Failure`` with its English text.
    /// Runs `body` with the apps and the accounts that own them.
    private static func withApps<T>(_ configuration: GatehouseConfiguration, _ body: (AppsService, AccountStore) async throws -> T) async throws -> T {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            try await body(services.signToLogin.apps, AccountStore(database: services.database))
        }
    }
}
