import Foundation

/// The admin API (`/admin/v1`): how a business's own systems keep the client records Gatehouse
/// binds accounts to, and its accounts (`AdminAccounts.swift`). Called with an admin key (`Authorization: Bearer ghadm_…`) whose scopes
/// name what it may do, never with a person's session; every call that changes something is in
/// the audit trail as that key. Errors are problem documents, as on `/v1`.
public enum AdminAPI {
    public static let readClients = "clients:read"
    public static let writeClients = "clients:write"
    public static let importAccounts = "accounts:import"

    public static let client = Endpoint<NoContent, AdminClient>(.get, "/admin/v1/clients/{phone}", access: .adminKey(scope: readClients))
        .operation("adminGetClient", "Read a client record", tags: "Admin")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.clientNotFound]])
        .shared(.unexpectedProblem)
    public static let saveClient = Endpoint<AdminClientFields, AdminClient>(.put, "/admin/v1/clients/{phone}", access: .adminKey(scope: writeClients))
        .operation("adminSaveClient", "Create or replace a client record", tags: "Admin")
        .errors([400: [.invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    public static let deleteClient = Endpoint<NoContent, NoContent>(.delete, "/admin/v1/clients/{phone}", success: 204, access: .adminKey(scope: writeClients))
        .operation("adminDeleteClient", "Delete a client record", tags: "Admin")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.clientNotFound]])
        .shared(.unexpectedProblem)
    /// The body is the file itself: JSON lines (`application/x-ndjson`) or CSV (`text/csv`).
    public static let importClients = Endpoint<RawBody, ClientImportReport>(
        .post, "/admin/v1/clients/import", access: .adminKey(scope: writeClients),
        query: [QueryParameter("format", .choice(["jsonl", "csv"])), QueryParameter("dryRun", .choice(["true", "false"]))])
        .operation("adminImportClients", "Import client records in bulk", tags: "Admin")
        .errors([400: [.invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)

    /// The body is the file: JSON lines (docs/migrating.md), read as it arrives.
    public static let importAccountsFile = Endpoint<RawBody, AccountImportReport>(
        .post, "/admin/v1/accounts/import", access: .adminKey(scope: importAccounts), query: [QueryParameter("dryRun", .choice(["true", "false"]))])
        .operation("adminImportAccounts", "Import accounts with the password hashes another system kept", tags: "Admin")
        .errors([400: [.invalidParameter], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)

    public static let all: [any EndpointDeclaration] = [client, saveClient, deleteClient, importClients, importAccountsFile] + accountOperations + webhookOperations
}

/// A client record's fields as a business system writes them (`PUT`): the phone is the path's.
public struct AdminClientFields: Codable, Sendable, Equatable {
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    public var email: String?
    /// `yyyy-MM-dd` (the phone-first spec's `dd.MM.yyyy` is read too).
    public var birthday: String?
    /// The last booked room and base.
    public var room: String?
    public var base: String?
    /// Per partner zone: the sum of fines, whether banned, the discount in percent.
    public var parts: [PhonePartnerZone]?

    public init(firstName: String? = nil, lastName: String? = nil, middleName: String? = nil, email: String? = nil, birthday: String? = nil,
                room: String? = nil, base: String? = nil, parts: [PhonePartnerZone]? = nil) {
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.email = email
        self.birthday = birthday
        self.room = room
        self.base = base
        self.parts = parts
    }
}

/// A client record as the admin API shows it.
public struct AdminClient: Codable, Sendable, Equatable {
    /// E.164.
    public var phone: String
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    public var email: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    public var room: String?
    public var base: String?
    public var parts: [PhonePartnerZone]
    /// The account bound to it (by its verified phone), if any.
    public var accountId: UUID?

    public init(phone: String, firstName: String?, lastName: String?, middleName: String?, email: String?, birthday: String?,
                room: String?, base: String?, parts: [PhonePartnerZone], accountId: UUID?) {
        self.phone = phone
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.email = email
        self.birthday = birthday
        self.room = room
        self.base = base
        self.parts = parts
        self.accountId = accountId
    }
}

/// What an account import did, or (`dryRun=true`) would do (docs/migrating.md): each row on its own; a row already
/// here (by external id, email, phone or tag) is left as it is.
public struct AccountImportReport: Codable, Sendable, Equatable {
    public var imported: Int
    public var existing: Int
    /// The first hundred refused rows, with their line and why.
    public var refused: [ClientImportReport.Refusal]
    public var refusedCount: Int
    /// False for a dry run: the counts are what the import would do.
    public var applied: Bool

    public init(imported: Int, existing: Int, refused: [ClientImportReport.Refusal], refusedCount: Int, applied: Bool) {
        self.imported = imported
        self.existing = existing
        self.refused = refused
        self.refusedCount = refusedCount
        self.applied = applied
    }
}

/// What an import did, or (`dryRun=true`) would do: nothing of a file is applied unless all its
/// good rows are; refused rows are reported with their line and why.
public struct ClientImportReport: Codable, Sendable, Equatable {
    public struct Refusal: Codable, Sendable, Equatable {
        public var line: Int
        public var reason: String
        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }
    public var created: Int
    public var updated: Int
    public var unchanged: Int
    public var refused: [Refusal]
    /// False for a dry run: the counts are what applying it would do.
    public var applied: Bool

    public init(created: Int, updated: Int, unchanged: Int, refused: [Refusal], applied: Bool) {
        self.created = created
        self.updated = updated
        self.unchanged = unchanged
        self.refused = refused
        self.applied = applied
    }
}
