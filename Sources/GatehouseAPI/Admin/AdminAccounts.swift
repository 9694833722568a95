import Foundation

/// The admin API over accounts (`/admin/v1/accounts…`): a business's own systems find, list, create, change, lock and
/// help accounts with an admin key of scope `accounts:read` or `accounts:write`, every call in the audit trail as the
/// key. The same services the operator console calls: a lock, an ended session or a removed factor is the same
/// change whoever made it.
extension AdminAPI {
    /// The scope of an admin key that finds and reads accounts.
    public static let readAccounts = "accounts:read"
    /// The scope of an admin key that creates, changes, locks and deletes accounts.
    public static let writeAccounts = "accounts:write"

    /// Accounts, newest first, by any of the filters; one filter of `email`, `phone`, `tag`, `externalId` finds one.
    public static let accounts = Endpoint<AdminAccountQuery, AdminAccountPage>(.get, "/admin/v1/accounts", access: .adminKey(scope: readAccounts))
        .operation("adminListAccounts", "Find and list accounts", tags: "Admin accounts")
        .errors([400: [.invalidParameter], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    /// `GET /admin/v1/accounts/{id}`: read an account. Scope `accounts:read`. The account with its state, its second
    /// factors (the authenticator app on or off, its passkeys by id and name), its live sessions' count and its last
    /// sign-in; never its password hash, codes or tokens. Audited as `account.read`.
    public static let account = Endpoint<NoContent, AdminAccount>(.get, "/admin/v1/accounts/{id}", access: .adminKey(scope: readAccounts))
        .operation("adminGetAccount", "Read an account", tags: "Admin accounts")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts`: create an account. Scope `accounts:write`. An account with an email, a phone or a tag
    /// at least, checked as an import row is. With `password` (the password rules apply: `weak_password`) the person
    /// signs in with it. Without one nothing signs in with a password until the person sets it: with `invite: true` a
    /// code goes to the verified email (else the verified phone) in words that say an account was made; the person sets
    /// the password with it through "forgot password" (`POST /v1/recovery`), which sends a new code at any time.
    /// `emailVerified`/`phoneVerified` say the business proved the address: an unverified one names no account until
    /// its owner proves it. Audited as `account.created` with `with: admin`.
    public static let createAccount = Endpoint<AdminAccountCreation, AdminAccount>(.post, "/admin/v1/accounts", success: 201, access: .adminKey(scope: writeAccounts))
        .operation("adminCreateAccount", "Create an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody, .weakPassword], 401: [.unauthorized], 403: [.insufficientScope],
                 409: [.emailTaken, .phoneTaken, .tagTaken]])
        .shared(.unexpectedProblem)
    /// `PATCH /admin/v1/accounts/{id}`: change an account's profile and verified flags. Scope `accounts:write`. The
    /// members given change, the others stay; an empty text clears a name or the external id. A new email or phone is
    /// unverified unless its flag says otherwise in the same call, and any pending email change ends. The account's
    /// sessions see the change at once. Audited as `account.updated` with the changed members' names, which the person
    /// sees among their own events.
    public static let updateAccount = Endpoint<AdminAccountChange, AdminAccount>(.patch, "/admin/v1/accounts/{id}", access: .adminKey(scope: writeAccounts))
        .operation("adminUpdateAccount", "Change an account's profile and verified flags", tags: "Admin accounts")
        .errors([400: [.invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound],
                 409: [.emailTaken, .phoneTaken, .tagTaken]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts/{id}/lock`: lock an account and end its sessions. Scope `accounts:write`. Locks the
    /// account and ends its sessions in one transaction, with the reason: no session opens on any surface until it is
    /// unlocked (a locked account stays as it is). Audited as `account.locked`.
    public static let lockAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/lock", access: .adminKey(scope: writeAccounts))
        .operation("adminLockAccount", "Lock an account and end its sessions", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts/{id}/unlock`: unlock an account. Scope `accounts:write`. Unlocks it, with the reason.
    /// Audited as `account.unlocked`.
    public static let unlockAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/unlock", access: .adminKey(scope: writeAccounts))
        .operation("adminUnlockAccount", "Unlock an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts/{id}/end-sessions`: end every session of an account. Scope `accounts:write`. Ends every
    /// session of the account (its signed tokens stop at their expiry, its refresh tokens at once), with the reason.
    /// Audited as `sessions.revoked`.
    public static let endSessions = Endpoint<AdminReason, AdminAccountChanged>(.post, "/admin/v1/accounts/{id}/end-sessions", access: .adminKey(scope: writeAccounts))
        .operation("adminEndSessions", "End every session of an account", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts/{id}/remove-second-factors`: remove an account's authenticator app or passkeys. Scope
    /// `accounts:write`. Turns off the authenticator app (`totp: true`), removes passkeys by id (`passkeyIds`), or
    /// (neither given) every second factor, with the reason: for a person who lost them and proved who they are another
    /// way. The owner is told of each. Audited as `second_factor.removed`, one event a factor.
    public static let removeSecondFactors = Endpoint<AdminFactorRemoval, AdminAccountChanged>(
        .post, "/admin/v1/accounts/{id}/remove-second-factors", access: .adminKey(scope: writeAccounts))
        .operation("adminRemoveSecondFactors", "Remove an account's authenticator app or passkeys", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound, .passkeyNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)
    /// `POST /admin/v1/accounts/{id}/delete`: start an account's deletion. Scope `accounts:write`. Starts the deletion
    /// as the person's own would: every app's check first, then every session ends and the data is erased after
    /// `GATEHOUSE_ACCOUNT_DELETION_GRACE_SECONDS` (`erasesAt`), unless the person signs in with their password before.
    /// Audited as `account.deletion_requested` with the reason.
    public static let deleteAccount = Endpoint<AdminReason, AdminAccount>(.post, "/admin/v1/accounts/{id}/delete", access: .adminKey(scope: writeAccounts))
        .operation("adminDeleteAccount", "Start an account's deletion", tags: "Admin accounts")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope], 404: [.accountNotFound],
                 409: [.walletNotEmpty, .appsEnabled]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .accountNotFound)

    /// Every operation of the admin API over accounts.
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
    /// Finds the account with this email address.
    public var email: String?
    /// Finds the account with this phone number.
    public var phone: String?
    /// Finds the account with this tag.
    public var tag: String?
    /// Finds the account with this external id (the business's own id for it).
    public var externalId: String?
    /// Only accounts in this state.
    public var state: AdminAccountState?
    /// Only accounts made at or after this time (RFC 3339).
    public var createdAfter: String?
    /// Only accounts made before this time (RFC 3339).
    public var createdBefore: String?
    /// Only accounts whose last sign-in was at or after this time (RFC 3339).
    public var signedInAfter: String?
    /// Only accounts whose last sign-in was before this time (RFC 3339).
    public var signedInBefore: String?
    /// Where the page starts: a `nextCursor` of a previous answer.
    public var cursor: String?
    /// How many items a page holds at most.
    public var limit: Int?

    /// Makes one of its members, each as its property describes.
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

    /// The parameters that are times (RFC 3339), checked as such.
    public static let times = ["createdAfter", "createdBefore", "signedInAfter", "signedInBefore"]

    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [
        QueryParameter("email", .text), QueryParameter("phone", .text), QueryParameter("tag", .text), QueryParameter("externalId", .text),
        .choice("state", AdminAccountState.self),
    ] + times.map { QueryParameter($0, .described(.dateTime)) } + [.cursor, .limit]

    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
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

    /// The query's values to send, by name; absent parameters are left out.
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
    /// Its id.
    public var id: UUID
    /// The business's own id for the account, unique when set.
    public var externalId: String?
    /// The email address.
    public var email: String?
    /// Whether the email address is proven (by a code, or by the business that said so).
    public var emailVerified: Bool
    /// The phone number, in E.164.
    public var phone: String?
    /// Whether the phone number is proven (by a code, or by the business that said so).
    public var phoneVerified: Bool
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic).
    public var middleName: String?
    /// The language the server writes to the person in (`en`, `ru`).
    public var locale: String?
    /// Active, locked, or being deleted.
    public var state: AdminAccountState
    /// Whether a password signs in (an account imported or created without one has none until its person sets it).
    public var hasPassword: Bool
    /// When it was locked; nil when it is not.
    public var lockedAt: Date?
    /// Why it was locked, as whoever locked it wrote.
    public var lockedReason: String?
    /// When the deletion under way erases it.
    public var erasesAt: Date?
    /// Whether the authenticator app is on.
    public var totp: Bool
    /// Its passkeys, by id and name.
    public var passkeys: [AdminPasskey]
    /// How many sessions it has live now.
    public var sessions: Int
    /// When it was made.
    public var createdAt: Date
    /// When it last signed in on any surface; nil when never.
    public var lastSignInAt: Date?

    /// Makes one of its members, each as its property describes.
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
    /// Its id.
    public var id: UUID
    /// Its name.
    public var name: String
    /// When it was made.
    public var createdAt: Date
    /// When it last signed the person in; nil when never.
    public var lastUsedAt: Date?

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, name: String, createdAt: Date, lastUsedAt: Date?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A page of accounts, newest first; `nextCursor` goes on from the last.
public struct AdminAccountPage: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [AdminAccount]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?

    /// Makes one of its members, each as its property describes.
    public init(items: [AdminAccount], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// `POST /admin/v1/accounts`: an email, a phone or a tag at least. With `password` the person signs in with it; without
/// one, `invite` sends the email (or the phone) a code that lets the person set it.
public struct AdminAccountCreation: Codable, Sendable, Equatable {
    /// The business's own id for the account (unique).
    public var externalId: String?
    /// The email address.
    public var email: String?
    /// The email address is proven already (the business checked it): it names the account at once.
    public var emailVerified: Bool?
    /// The phone number, in E.164.
    public var phone: String?
    /// The phone number is proven already (the business checked it): it names the account at once.
    public var phoneVerified: Bool?
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The language the server writes to the person in (`en`, `ru`).
    public var locale: String?
    /// A password to sign in with (the password rules apply); nil for none yet.
    public var password: String?
    /// Sends the person a code to set a password with (to the verified email, else phone).
    public var invite: Bool?

    /// Makes one of its members, each as its property describes.
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
    /// A new external id; an empty text clears it.
    public var externalId: String?
    /// The email address.
    public var email: String?
    /// Says the (new) email address is proven.
    public var emailVerified: Bool?
    /// The phone number, in E.164.
    public var phone: String?
    /// Says the (new) phone number is proven.
    public var phoneVerified: Bool?
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic); an empty text clears it.
    public var middleName: String?
    /// The language the server writes to the person in (`en`, `ru`).
    public var locale: String?

    /// Makes one of its members, each as its property describes.
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
    /// Why, in the words of whoever did it (kept in the audit trail).
    public var reason: String

    /// Makes one of its members, each as its property describes.
    public init(reason: String) {
        self.reason = reason
    }
}

/// Which second factors to remove: the authenticator app (`totp`), passkeys by id, or (neither given) every one.
public struct AdminFactorRemoval: Codable, Sendable, Equatable {
    /// Why, in the words of whoever did it (kept in the audit trail).
    public var reason: String
    /// Turns off the authenticator app (and its recovery codes).
    public var totp: Bool?
    /// Removes these passkeys.
    public var passkeyIds: [UUID]?

    /// Makes one of its members, each as its property describes.
    public init(reason: String, totp: Bool? = nil, passkeyIds: [UUID]? = nil) {
        self.reason = reason
        self.totp = totp
        self.passkeyIds = passkeyIds
    }
}

/// How many things a change ended or removed, with the account after it.
public struct AdminAccountChanged: Codable, Sendable, Equatable {
    /// How many were changed (sessions ended, factors removed).
    public var count: Int
    /// The account as it is now.
    public var account: AdminAccount

    /// Makes one of its members, each as its property describes.
    public init(count: Int, account: AdminAccount) {
        self.count = count
        self.account = account
    }
}
