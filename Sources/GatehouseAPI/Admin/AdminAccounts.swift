import Foundation

/// The admin API over accounts (`/admin/v1/accounts…`): a business's own systems find, list, create, change, lock and
/// help accounts with an admin key of scope `accounts:read` or `accounts:write`, every call in the audit trail as the
/// key. The same services the operator console calls: a lock, an ended session or a removed factor is the same
/// change whoever made it.
extension AdminAPI {
    public static let readAccounts = "accounts:read"
    public static let writeAccounts = "accounts:write"

    /// Accounts, newest first, by any of the filters; one filter of `email`, `phone`, `tag`, `externalId` finds one.
    public static let accounts = Endpoint<AdminAccountQuery, AdminAccountPage>(.get, "/admin/v1/accounts", access: .adminKey(scope: readAccounts))
        .operation("adminListAccounts", "Find and list accounts", tags: "Admin accounts")
        .errors([400: [.invalidParameter], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    public static let account = Endpoint<NoContent, AdminAccount>(.get, "/admin/v1/accounts/{id}", access: .adminKey(scope: readAccounts))
        .operation("adminGetAccount", "Read an account", tags: "Admin accounts")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let createAccount = Endpoint<AdminAccountCreation, AdminAccount>(.post, "/admin/v1/accounts", success: 201, access: .adminKey(scope: writeAccounts))
        .operation("adminCreateAccount", "Create an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody, .weakPassword], 401: [.unauthorized], 403: [.insufficientScope],
                 409: [.emailTaken, .phoneTaken, .tagTaken]])
        .shared(.unexpectedProblem)
    public static let updateAccount = Endpoint<AdminAccountChange, AdminAccount>(.patch, "/admin/v1/accounts/{id}", access: .adminKey(scope: writeAccounts))
        .operation("adminUpdateAccount", "Change an account's profile and verified flags", tags: "Admin accounts")
        .errors([400: [.invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound],
                 409: [.emailTaken, .phoneTaken, .tagTaken]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let lockAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/lock", access: .adminKey(scope: writeAccounts))
        .operation("adminLockAccount", "Lock an account and end its sessions", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let unlockAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/unlock", access: .adminKey(scope: writeAccounts))
        .operation("adminUnlockAccount", "Unlock an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let endSessions = Endpoint<AdminReason, AdminAccountChanged>(.post, "/admin/v1/accounts/{id}/end-sessions", access: .adminKey(scope: writeAccounts))
        .operation("adminEndSessions", "End every session of an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let removeSecondFactors = Endpoint<AdminFactorRemoval, AdminAccountChanged>(
        .post, "/admin/v1/accounts/{id}/remove-second-factors", access: .adminKey(scope: writeAccounts))
        .operation("adminRemoveSecondFactors", "Remove an account's authenticator app or passkeys", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound, .passkeyNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    public static let deleteAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/delete", access: .adminKey(scope: writeAccounts))
        .operation("adminDeleteAccount", "Start an account's deletion", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound],
                 409: [.walletNotEmpty, .appsEnabled]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)

    public static let accountOperations: [any EndpointDeclaration] = [
        accounts, account, createAccount, updateAccount, lockAccount, unlockAccount, endSessions, removeSecondFactors, deleteAccount,
    ]
}

/// An account's state as the admin API lists it.
public enum AdminAccountState: String, Codable, Sendable, CaseIterable {
    /// Anyone may sign in to it.
    case active
    /// Locked: no session opens until it is unlocked.
    case locked
    /// Its deletion is under way: erased at `erasesAt` unless its owner signs in with the password before.
    case deleting
}

/// `GET /admin/v1/accounts`: filters, all optional, all together.
public struct AdminAccountQuery: EndpointQuery, Equatable {
    public var email: String?
    public var phone: String?
    public var tag: String?
    public var externalId: String?
    public var state: AdminAccountState?
    public var createdAfter: String?
    public var createdBefore: String?
    public var signedInAfter: String?
    public var signedInBefore: String?
    public var cursor: String?
    public var limit: Int?

    public init(email: String? = nil, phone: String? = nil, tag: String? = nil, externalId: String? = nil, state: AdminAccountState? = nil,
                createdAfter: String? = nil, createdBefore: String? = nil, signedInAfter: String? = nil, signedInBefore: String? = nil,
                cursor: String? = nil, limit: Int? = nil) {
        self.email = email
        self.phone = phone
        self.tag = tag
        self.externalId = externalId
        self.state = state
        self.createdAfter = createdAfter
        self.createdBefore = createdBefore
        self.signedInAfter = signedInAfter
        self.signedInBefore = signedInBefore
        self.cursor = cursor
        self.limit = limit
    }

    public static let times = ["createdAfter", "createdBefore", "signedInAfter", "signedInBefore"]

    public static let parameters: [QueryParameter] = [
        QueryParameter("email", .text), QueryParameter("phone", .text), QueryParameter("tag", .text), QueryParameter("externalId", .text),
        .choice("state", AdminAccountState.self),
    ] + times.map { QueryParameter($0, .described(.dateTime)) } + [.cursor, .limit]

    public init(from query: QueryValues) throws {
        var times: [String: String] = [:]
        for name in Self.times {
            guard let text = query.text(name) else { continue }
            guard WireDates.parseFlexible(text) != nil else { throw QueryError(name: name, value: text, expected: "an ISO 8601 time such as 2026-01-31T12:00:00Z") }
            times[name] = text
        }
        self.init(email: query.text("email"), phone: query.text("phone"), tag: query.text("tag"), externalId: query.text("externalId"),
                  state: try query.choice("state", as: AdminAccountState.self), createdAfter: times["createdAfter"], createdBefore: times["createdBefore"],
                  signedInAfter: times["signedInAfter"], signedInBefore: times["signedInBefore"], cursor: query.text("cursor"), limit: try query.limit())
    }

    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("email", email)
        values.put("phone", phone)
        values.put("tag", tag)
        values.put("externalId", externalId)
        values.put("state", state)
        values.put("createdAfter", createdAfter)
        values.put("createdBefore", createdBefore)
        values.put("signedInAfter", signedInAfter)
        values.put("signedInBefore", signedInBefore)
        values.put("cursor", cursor)
        values.put("limit", limit)
        return values
    }
}

/// An account as the admin API shows it: never its password hash, its codes or its tokens.
public struct AdminAccount: Codable, Sendable, Equatable {
    public var id: UUID
    public var externalId: String?
    public var email: String?
    public var emailVerified: Bool
    public var phone: String?
    public var phoneVerified: Bool
    public var tag: String?
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    public var locale: String?
    public var state: AdminAccountState
    /// Whether a password signs in (an account imported or created without one has none until its person sets it).
    public var hasPassword: Bool
    public var lockedAt: Date?
    public var lockedReason: String?
    /// When the deletion under way erases it.
    public var erasesAt: Date?
    /// Whether the authenticator app is on.
    public var totp: Bool
    public var passkeys: [AdminPasskey]
    public var sessions: Int
    public var createdAt: Date
    public var lastSignInAt: Date?

    public init(id: UUID, externalId: String?, email: String?, emailVerified: Bool, phone: String?, phoneVerified: Bool, tag: String?,
                firstName: String?, lastName: String?, middleName: String?, locale: String?, state: AdminAccountState, hasPassword: Bool,
                lockedAt: Date?, lockedReason: String?, erasesAt: Date?, totp: Bool, passkeys: [AdminPasskey], sessions: Int, createdAt: Date,
                lastSignInAt: Date?) {
        self.id = id
        self.externalId = externalId
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.tag = tag
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.locale = locale
        self.state = state
        self.hasPassword = hasPassword
        self.lockedAt = lockedAt
        self.lockedReason = lockedReason
        self.erasesAt = erasesAt
        self.totp = totp
        self.passkeys = passkeys
        self.sessions = sessions
        self.createdAt = createdAt
        self.lastSignInAt = lastSignInAt
    }
}

/// A passkey as the admin API lists it (to remove one by its id).
public struct AdminPasskey: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(id: UUID, name: String, createdAt: Date, lastUsedAt: Date?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A page of accounts, newest first; `nextCursor` goes on from the last.
public struct AdminAccountPage: Codable, Sendable, Equatable {
    public var items: [AdminAccount]
    public var nextCursor: String?

    public init(items: [AdminAccount], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// `POST /admin/v1/accounts`: an email, a phone or a tag at least. With `password` the person signs in with it; without
/// one, `invite` sends the email (or the phone) a code that lets the person set it.
public struct AdminAccountCreation: Codable, Sendable, Equatable {
    public var externalId: String?
    public var email: String?
    public var emailVerified: Bool?
    public var phone: String?
    public var phoneVerified: Bool?
    public var tag: String?
    public var firstName: String?
    public var lastName: String?
    public var locale: String?
    public var password: String?
    public var invite: Bool?

    public init(externalId: String? = nil, email: String? = nil, emailVerified: Bool? = nil, phone: String? = nil, phoneVerified: Bool? = nil,
                tag: String? = nil, firstName: String? = nil, lastName: String? = nil, locale: String? = nil, password: String? = nil, invite: Bool? = nil) {
        self.externalId = externalId
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.tag = tag
        self.firstName = firstName
        self.lastName = lastName
        self.locale = locale
        self.password = password
        self.invite = invite
    }
}

/// `PATCH /admin/v1/accounts/{id}`: the members given change, the others stay; an empty text clears a name or the
/// external id.
public struct AdminAccountChange: Codable, Sendable, Equatable {
    public var externalId: String?
    public var email: String?
    public var emailVerified: Bool?
    public var phone: String?
    public var phoneVerified: Bool?
    public var tag: String?
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    public var locale: String?

    public init(externalId: String? = nil, email: String? = nil, emailVerified: Bool? = nil, phone: String? = nil, phoneVerified: Bool? = nil,
                tag: String? = nil, firstName: String? = nil, lastName: String? = nil, middleName: String? = nil, locale: String? = nil) {
        self.externalId = externalId
        self.email = email
        self.emailVerified = emailVerified
        self.phone = phone
        self.phoneVerified = phoneVerified
        self.tag = tag
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.locale = locale
    }
}

/// Why: kept in the audit trail with the change.
public struct AdminReason: Codable, Sendable, Equatable {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }
}

/// Which second factors to remove: the authenticator app (`totp`), passkeys by id, or (neither given) every one.
public struct AdminFactorRemoval: Codable, Sendable, Equatable {
    public var reason: String
    public var totp: Bool?
    public var passkeyIds: [UUID]?

    public init(reason: String, totp: Bool? = nil, passkeyIds: [UUID]? = nil) {
        self.reason = reason
        self.totp = totp
        self.passkeyIds = passkeyIds
    }
}

/// How many things a change ended or removed, with the account after it.
public struct AdminAccountChanged: Codable, Sendable, Equatable {
    public var count: Int
    public var account: AdminAccount

    public init(count: Int, account: AdminAccount) {
        self.count = count
        self.account = account
    }
}
