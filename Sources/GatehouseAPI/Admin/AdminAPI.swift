import Foundation

/// The admin API (`/admin/v1`): how a business's own systems keep the client records Gatehouse
/// binds accounts to, and its accounts (`AdminAccounts.swift`). Called with an admin key (`Authorization: Bearer ghadm_…`) whose scopes
/// name what it may do, never with a person's session; every call that changes something is in
/// the audit trail as that key. Errors are problem documents, as on `/v1`.
public enum AdminAPI {
    /// The scope of an admin key that reads client records.
    public static let readClients = "clients:read"
    /// The scope of an admin key that writes client records (save, delete, import).
    public static let writeClients = "clients:write"
    /// `GET /admin/v1/clients/{phone}`: read a client record. Scope `clients:read`. With `accountId` when an account is
    /// bound to it (by its verified phone).
    public static let importAccounts = "accounts:import"

    /// `GET /admin/v1/clients/{phone}`: read a client record. Scope `clients:read`. With `accountId` when an account is
    /// bound to it (by its verified phone).
    public static let client = Endpoint<NoContent, AdminClient>(.get, "/admin/v1/clients/{phone}", access: .adminKey(scope: readClients))
        .operation("adminGetClient", "Read a client record", tags: "Admin")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.clientNotFound]])
        .shared(.unexpectedProblem)
    /// `PUT /admin/v1/clients/{phone}`: create or replace a client record. Scope `clients:write`. Idempotent: the
    /// record of the phone takes these fields (absent ones become empty), its binding kept; the same fields change
    /// nothing. Checked as an import row is (texts at most 200 characters, an email, a date that exists, partner zones
    /// with distinct `domainId`, `forfeit` ≥ 0, `discount` 0–100). Audited as `client.saved` when it changed.
    public static let saveClient = Endpoint<AdminClientFields, AdminClient>(.put, "/admin/v1/clients/{phone}", access: .adminKey(scope: writeClients))
        .operation("adminSaveClient", "Create or replace a client record", tags: "Admin")
        .errors([400: [.invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    /// `DELETE /admin/v1/clients/{phone}`: delete a client record. Scope `clients:write`. A bound record is deleted too
    /// (it is the business's); the account keeps its own profile. Audited as `client.deleted`.
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

    /// Every operation of `/admin/v1`: the OpenAPI document lists them and the server routes them.
    public static let all: [any EndpointDeclaration] = [client, saveClient, deleteClient, importClients, importAccountsFile] + accountOperations + webhookOperations
}

/// A client record's fields as a business system writes them (`PUT`): the phone is the path's.
public struct AdminClientFields: Codable, Sendable, Equatable {
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic).
    public var middleName: String?
    /// The email address.
    public var email: String?
    /// `yyyy-MM-dd` (the phone-first spec's `dd.MM.yyyy` is read too).
    public var birthday: String?
    /// The last booked room and base.
    public var room: String?
    /// The client's base, as the business's own records name it.
    public var base: String?
    /// Per partner zone: the sum of fines, whether banned, the discount in percent.
    public var parts: [PhonePartnerZone]?

    /// Makes one of its members, each as its property describes.
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
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic).
    public var middleName: String?
    /// The email address.
    public var email: String?
    /// `yyyy-MM-dd`.
    public var birthday: String?
    /// The client's room, as the business's own records name it.
    public var room: String?
    /// The client's base, as the business's own records name it.
    public var base: String?
    /// The partner zones the client belongs to (`parts` in `GET /api/users/user`).
    public var parts: [PhonePartnerZone]
    /// The account bound to it (by its verified phone), if any.
    public var accountId: UUID?

    /// Makes one of its members, each as its property describes.
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
    /// Rows that made a new account.
    public var imported: Int
    /// Rows whose account existed already (matched by email, phone or external id): left as they were.
    public var existing: Int
    /// The first hundred refused rows, with their line and why.
    public var refused: [ClientImportReport.Refusal]
    /// How many rows were refused (the first of them are listed with their reasons).
    public var refusedCount: Int
    /// False for a dry run: the counts are what the import would do.
    public var applied: Bool

    /// Makes one of its members, each as its property describes.
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
    /// A row of the file that was not imported, and why.
    public struct Refusal: Codable, Sendable, Equatable {
        /// The row's line in the file (the header is line 1).
        public var line: Int
        /// Why, in the words of whoever did it (kept in the audit trail).
        public var reason: String
        /// Makes one of its members, each as its property describes.
        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }
    /// Records made by the import.
    public var created: Int
    /// Records that existed and changed.
    public var updated: Int
    /// Records that existed and were already the same.
    public var unchanged: Int
    /// The rows refused, with their reasons; the others were imported.
    public var refused: [Refusal]
    /// False for a dry run: the counts are what applying it would do.
    public var applied: Bool

    /// Makes one of its members, each as its property describes.
    public init(created: Int, updated: Int, unchanged: Int, refused: [Refusal], applied: Bool) {
        self.created = created
        self.updated = updated
        self.unchanged = unchanged
        self.refused = refused
        self.applied = applied
    }
}
