import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Sign in with Apple and Google (docs/social-login.md, whose threat model each rule here answers): a provider's
/// identity token, checked by `IdentityTokenVerifier`, signs in the account its `(provider, sub)` is linked to, or
/// makes one. An account is never found by the provider's email: a verified email that is another account's
/// confirmed address answers `identity_link_required`, and the identity joins that account only with its password
/// (and second factor); one that is only another account's unconfirmed claim is taken from it. Each token signs in
/// once. A provider's sign-in is a sign-in: a lock, a deletion under way and a second factor hold as for a password.
package struct SocialSignIn: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.IdentityProviders
    /// The providers this server takes, each with its verifier (none unless configured).
    package let verifiers: [IdentityProvider: IdentityTokenVerifier]
    /// Apple's token endpoint, when the team's key is configured: an authorization code is exchanged for the refresh
    /// token that revokes the person's authorization when their account is deleted.
    package let apple: AppleEndpoints?
    package let secrets: Secrets
    package let sessions: SessionService
    package let secondFactors: SecondFactors
    package let login: LoginService
    package let proofs: AddressProofs
    package let outbox: Outbox
    package let audit: AuditLog
    package let notices: SecurityNotices
    /// How long a linked identity can be undone by a password recovery (the second factors' setting).
    package let recoveryUndoesWithin: TimeInterval
    private var accounts: AccountStore { AccountStore(database: database) }
    private var store: IdentityStore { IdentityStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.IdentityProviders,
                 verifiers: [IdentityProvider: IdentityTokenVerifier], apple: AppleEndpoints?, secrets: Secrets, sessions: SessionService, secondFactors: SecondFactors,
                 login: LoginService, proofs: AddressProofs, outbox: Outbox, audit: AuditLog, notices: SecurityNotices, recoveryUndoesWithin: TimeInterval) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.verifiers = verifiers
        self.apple = apple
        self.secrets = secrets
        self.sessions = sessions
        self.secondFactors = secondFactors
        self.login = login
        self.proofs = proofs
        self.outbox = outbox
        self.audit = audit
        self.notices = notices
        self.recoveryUndoesWithin = recoveryUndoesWithin
    }

    /// The providers on, as `GET /v1/sessions/providers` shows them.
    package var providers: SignInProviders {
        SignInProviders(providers: IdentityProvider.allCases.compactMap { provider in
            verifiers[provider].map { SignInProvider(name: provider, clientIds: $0.audiences.sorted()) }
        })
    }

    /// The names a first sign-in gives the account: Apple's from the app (its first authorization only), Google's
    /// from its token.
    package struct Names: Sendable {
        package var given: String?
        package var family: String?
        package init(given: String?, family: String?) {
            self.given = given
            self.family = family
        }
    }

    // MARK: Signing in

    /// Signs in with `provider`'s token: the linked account, or a new one; `identity_link_required` when the
    /// provider's verified email is another account's confirmed address; `second_factor_required` (with a challenge
    /// for `POST /v1/sessions/second-factor`) when the account has a second factor and the operator asks for it.
    package func signIn(_ provider: IdentityProvider, token: String, nonce: String, authorizationCode: String? = nil, names: Names,
                        origin: RequestOrigin) async throws -> IssuedSession {
        let identity = try await verify(provider, token: token, nonce: nonce, origin: origin)
        let now = clock.now()
        if let linked = try await store.find(provider, subject: identity.subject) {
            let refresh = await refreshToken(identity, code: authorizationCode)
            return try await signIn(linked, identity: identity, token: token, refresh: refresh, origin: origin)
        }
        // No account has this identity. A verified address an account has confirmed is that account's: offered for
        // linking, never joined by the address alone (the classic–federated merge).
        if identity.emailVerified, let email = identity.email, let owner = try await accounts.owner(of: .email(email)), let ownerID = owner.id {
            let refresh = await refreshToken(identity, code: authorizationCode)
            let linkToken = secrets.token()
            let expiresAt = now.addingTimeInterval(settings.linkTTL)
            try await database.db.withTransaction { tx in
                guard try await store.spendToken(token, expiresAt: identity.expiresAt.addingTimeInterval(settings.skew), now: now, on: tx) else {
                    throw Self.tokenInvalid(provider, "used before")
                }
                try await store.addOffer(tokenHash: Secrets.sha256Hex(linkToken), accountID: ownerID, identity: identity, email: email,
                                         refreshTokenSealed: refresh.sealed, at: now, expiresAt: expiresAt, on: tx)
            }
            var error = GatehouseError(.conflict, .identityLinkRequired, LocalizedText("error.identityLinkRequired", [provider.displayName]))
            error.identityLink = IdentityLinkOffer(linkToken: linkToken, provider: provider, email: email, expiresAt: expiresAt)
            throw error
        }
        return try await create(identity, token: token, refresh: await refreshToken(identity, code: authorizationCode), names: names, origin: origin)
    }

    /// What the exchange of Apple's authorization code gave: the refresh token sealed, or why there is none (the
    /// sign-in goes on without it: the token was checked; what is lost is only the revocation, and the next sign-in
    /// with a code tries again).
    struct RefreshToken {
        var sealed: String?
        var note: String?
    }

    private func refreshToken(_ identity: ProviderIdentity, code: String?) async -> RefreshToken {
        guard identity.provider == .apple, let code, !code.isEmpty else { return RefreshToken() }
        guard code.utf8.count <= 512 else { return RefreshToken(note: "the authorization code is too long") }
        guard let apple else { return RefreshToken(note: "Apple's key is not configured") }
        do {
            let token = try await apple.refreshToken(code: code, clientID: identity.audience)
            return RefreshToken(sealed: try secrets.seal(Array(token.utf8), purpose: IdentityRevocations.sealPurpose), note: "kept")
        } catch AppleEndpoints.Failure.refused(let why) {
            return RefreshToken(note: "refused: \(why)")
        } catch AppleEndpoints.Failure.unavailable(let why) {
            return RefreshToken(note: "unavailable: \(why)")
        } catch {
            return RefreshToken(note: "\(error)")
        }
    }

    /// The audit detail of an account a provider made: which, and Apple's judgement of the person (`real_user_status`:
    /// `likelyReal`, `unknown`, `unsupported`), which an operator reviewing sign-ups for abuse reads beside it. Apple
    /// sends it on the first sign-in only, as it does the name.
    static func creationDetail(_ identity: ProviderIdentity) -> [String: String] {
        var detail = ["with": identity.provider.rawValue]
        switch identity.realUserStatus {
        case 2?: detail["realUserStatus"] = "likelyReal"
        case 1?: detail["realUserStatus"] = "unknown"
        case 0?: detail["realUserStatus"] = "unsupported"
        default: break
        }
        return detail
    }

    /// The audit detail of a sign-in: how, and what became of Apple's refresh token when a code came.
    private func detail(_ with: String, _ refresh: RefreshToken) -> [String: String] {
        var detail = ["with": with]
        if let note = refresh.note { detail["refreshToken"] = String(note.prefix(120)) }
        return detail
    }

    /// The linked account's sign-in.
    private func signIn(_ linked: IdentityStore.Row, identity: ProviderIdentity, token: String, refresh: RefreshToken,
                        origin: RequestOrigin) async throws -> IssuedSession {
        guard let account = try await accounts.row(id: linked.accountID), account.erasedAt == nil else { throw Self.tokenInvalid(identity.provider, "no account") }
        let accountID = linked.accountID
        let now = clock.now()
        let spendUntil = identity.expiresAt.addingTimeInterval(settings.skew)
        if account.secondFactorAt != nil, settings.secondFactor {
            try await database.db.withTransaction { tx in
                guard try await store.spendToken(token, expiresAt: spendUntil, now: now, on: tx) else { throw Self.tokenInvalid(identity.provider, "used before") }
                // The code was exchanged already: Apple's new token is the person's authorization, kept for its revocation
                // whether or not the second step follows.
                if let sealed = refresh.sealed { try await store.keepRefreshToken(linked.id, sealed: sealed, on: tx) }
            }
            throw GatehouseError.secondFactorRequired(try await secondFactors.challenge(for: accountID, origin: origin, firstMethod: identity.provider.rawValue))
        }
        try await login.takeBack(account, origin: origin)
        return try await database.db.withTransaction { tx in
            guard try await store.spendToken(token, expiresAt: spendUntil, now: now, on: tx) else { throw Self.tokenInvalid(identity.provider, "used before") }
            try await store.noteUse(linked.id, identity: identity, refreshTokenSealed: refresh.sealed, at: now, on: tx)
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(accountID), account: accountID, origin: origin.audit,
                                              detail: detail(identity.provider.rawValue, refresh)), on: tx)
            return try await sessions.create(accountID: accountID, methods: [.fed], device: origin.device, ip: origin.ip,
                                             secondFactorChecked: !settings.secondFactor, on: tx)
        }
    }

    /// A first sign-in: a new account, its address the provider's when the provider verified it (an unconfirmed
    /// claim on it elsewhere dropped), no password.
    private func create(_ identity: ProviderIdentity, token: String, refresh: RefreshToken, names: Names, origin: RequestOrigin) async throws -> IssuedSession {
        let now = clock.now()
        let account = AccountModel(passwordHash: PasswordHasher.unusable, now: now)
        if identity.emailVerified, let email = identity.email {
            account.email = email
            account.emailConfirmedAt = now
        }
        account.firstName = Self.name(identity.givenName ?? names.given)
        account.lastName = Self.name(identity.familyName ?? names.family)
        account.locale = origin.language.rawValue
        let accountID = account.id!
        do {
            let session = try await database.db.withTransaction { tx in
                guard try await store.spendToken(token, expiresAt: identity.expiresAt.addingTimeInterval(settings.skew), now: now, on: tx) else {
                    throw Self.tokenInvalid(identity.provider, "used before")
                }
                if let email = account.email { try await proofs.dropUnverifiedClaim(on: .email(email), on: tx) }
                try await accounts.create(account, on: tx)
                try await store.insert(identity, id: UUID(), accountID: accountID, refreshTokenSealed: refresh.sealed, at: now, on: tx)
                try await audit.record([
                    AuditEvent(.accountCreated, by: .account(accountID), account: accountID, origin: origin.audit, detail: Self.creationDetail(identity)),
                    AuditEvent(.loginSucceeded, by: .account(accountID), account: accountID, origin: origin.audit,
                               detail: detail(identity.provider.rawValue, refresh)),
                ], on: tx)
                return try await sessions.create(accountID: accountID, methods: [.fed], device: origin.device, ip: origin.ip, on: tx)
            }
            outbox.signal.wake()
            return session
        } catch where error.isConstraintViolation {
            // The same identity's first sign-in twice at once, or the address confirmed elsewhere meanwhile.
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
    }

    // MARK: Linking

    /// Takes up an `identity_link_required` offer: the account's password (and second factor, as a step-up) proves
    /// the account; the identity is joined to it, its other sessions end (a new way in, as a password change is),
    /// its owner is told, and the answer is a session.
    package func link(offerToken: String, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws -> IssuedSession {
        let invalid = GatehouseError.invalid(.identityLinkInvalid, "error.identityLinkInvalid").on(field: "linkToken")
        guard !offerToken.isEmpty, offerToken.utf8.count <= 200, let offer = try await store.offer(tokenHash: Secrets.sha256Hex(offerToken), at: clock.now()),
              let account = try await accounts.row(id: offer.accountID), account.erasedAt == nil
        else { throw invalid }
        let proof = try await secondFactors.stepUp(account, stepUp, origin: origin)
        try await login.takeBack(account, origin: origin)
        let identity = ProviderIdentity(provider: offer.provider, subject: offer.subject, audience: offer.audience, email: offer.email, emailVerified: true,
                                        isPrivateEmail: offer.privateEmail, realUserStatus: nil, givenName: nil, familyName: nil,
                                        issuedAt: clock.now(), expiresAt: clock.now())
        let notice = notices.securityNotice(.identityLinked, [offer.provider.displayName, String(Int(recoveryUndoesWithin / 86_400))], to: account)
        let accountID = offer.accountID
        let now = clock.now()
        do {
            let session = try await database.db.withTransaction { tx in
                guard try await store.useOffer(offer.id, at: now, on: tx) else { throw invalid }
                if let proof, try await !secondFactors.spend(proof, accountID: accountID, on: tx) { throw SecondFactors.wrongCode(proof) }
                try await store.insert(identity, id: UUID(), accountID: accountID, refreshTokenSealed: offer.refreshTokenSealed, at: now, on: tx)
                try await sessions.revokeAll(accountID: accountID, keeping: nil, on: tx)
                try await audit.record([
                    AuditEvent(.identityLinked, by: .account(accountID), account: accountID, origin: origin.audit, detail: ["provider": offer.provider.rawValue]),
                    AuditEvent(.loginSucceeded, by: .account(accountID), account: accountID, origin: origin.audit,
                               detail: ["with": "password" + (proof.map { " + " + $0.method } ?? "") + " + " + offer.provider.rawValue]),
                ], on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
                return try await sessions.create(accountID: accountID, methods: [.pwd] + (proof.map { [$0.authMethod] } ?? []) + [.fed], device: origin.device,
                                                 ip: origin.ip, secondFactorChecked: true, on: tx)
            }
            outbox.signal.wake()
            return session
        } catch where error.isConstraintViolation {
            throw Self.taken(offer.provider)
        }
    }

    /// A step-up of a signed-in account: its password, or a fresh sign-in with one of its identities (`reauth`: the
    /// provider, its token and nonce) for an account that may have none; then, when the account has a second
    /// factor, one proof of it. The reauthentication's token is spent in the transaction of the change (`spend`).
    package struct StepUp: Sendable {
        package var factors: SecondFactors.StepUp
        package var reauth: (provider: IdentityProvider, token: String, nonce: String)?
        package init(factors: SecondFactors.StepUp, reauth: (provider: IdentityProvider, token: String, nonce: String)?) {
            self.factors = factors
            self.reauth = reauth
        }
    }

    /// What a step-up proved, to be spent in the change's transaction.
    struct StepUpProof {
        var second: SecondFactors.Proof?
        var reauthToken: (provider: IdentityProvider, token: String, expiresAt: Date)?
    }

    private func stepUp(_ account: AccountModel, _ input: StepUp, origin: RequestOrigin) async throws -> StepUpProof {
        guard let reauth = input.reauth, (input.factors.currentPassword ?? "").isEmpty else {
            return StepUpProof(second: try await secondFactors.stepUp(account, input.factors, origin: origin))
        }
        let identity = try await verify(reauth.provider, token: reauth.token, nonce: reauth.nonce, origin: origin)
        guard let linked = try await store.find(reauth.provider, subject: identity.subject), linked.accountID == account.id else {
            throw Self.tokenInvalid(reauth.provider, "not an identity of this account")
        }
        return StepUpProof(second: try await secondFactors.secondProof(account, input.factors, origin: origin),
                           reauthToken: (reauth.provider, reauth.token, identity.expiresAt.addingTimeInterval(settings.skew)))
    }

    /// A fresh sign-in with one of the account's identities, checked and spent on its own: the proof an account with no
    /// password gives to be deleted.
    package func reauthenticate(accountID: UUID, provider: IdentityProvider, token: String, nonce: String, origin: RequestOrigin) async throws {
        let account = try await accounts.accountRow(id: accountID)
        let proof = try await stepUp(account, StepUp(factors: SecondFactors.StepUp(currentPassword: nil), reauth: (provider, token, nonce)),
                                     origin: origin)
        let now = clock.now()
        try await database.db.withTransaction { tx in try await spend(proof, accountID: accountID, now: now, on: tx) }
    }

    private func spend(_ proof: StepUpProof, accountID: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        if let reauth = proof.reauthToken {
            guard try await store.spendToken(reauth.token, expiresAt: reauth.expiresAt, now: now, on: tx) else {
                throw Self.tokenInvalid(reauth.provider, "used before").on(field: "reauthentication")
            }
        }
        if let second = proof.second, try await !secondFactors.spend(second, accountID: accountID, on: tx) { throw SecondFactors.wrongCode(second) }
    }

    /// Links `provider`'s identity to a signed-in account, after a step-up (a stolen session cannot add a way in).
    package func add(accountID: UUID, provider: IdentityProvider, token: String, nonce: String, authorizationCode: String? = nil, stepUp: StepUp,
                     origin: RequestOrigin) async throws -> LinkedIdentity {
        let account = try await accounts.accountRow(id: accountID)
        let identity = try await verify(provider, token: token, nonce: nonce, origin: origin)
        if let linked = try await store.find(provider, subject: identity.subject) {
            guard linked.accountID == accountID else { throw Self.taken(provider) }
            return linked.shown
        }
        let proof = try await self.stepUp(account, stepUp, origin: origin)
        let refresh = await refreshToken(identity, code: authorizationCode)
        let notice = notices.securityNotice(.identityLinked, [provider.displayName, String(Int(recoveryUndoesWithin / 86_400))], to: account)
        let now = clock.now()
        let id = UUID()
        do {
            try await database.db.withTransaction { tx in
                guard try await store.spendToken(token, expiresAt: identity.expiresAt.addingTimeInterval(settings.skew), now: now, on: tx) else {
                    throw Self.tokenInvalid(provider, "used before")
                }
                try await spend(proof, accountID: accountID, now: now, on: tx)
                try await store.insert(identity, id: id, accountID: accountID, refreshTokenSealed: refresh.sealed, at: now, on: tx)
                var detail = ["provider": provider.rawValue]
                if let note = refresh.note { detail["refreshToken"] = String(note.prefix(120)) }
                try await audit.record(AuditEvent(.identityLinked, by: .account(accountID), account: accountID, origin: origin.audit, detail: detail), on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
            }
        } catch where error.isConstraintViolation {
            throw Self.taken(provider)
        }
        if notice != nil { outbox.signal.wake() }
        return LinkedIdentity(id: id, provider: provider, email: identity.email, createdAt: now, lastUsedAt: now)
    }

    /// My identities.
    package func list(accountID: UUID) async throws -> [LinkedIdentity] {
        try await store.list(of: accountID).map(\.shown)
    }

    /// Unlinks one of my identities after a step-up, unless it is the account's last way in (`last_way_in`).
    package func remove(accountID: UUID, id: UUID, stepUp: StepUp, origin: RequestOrigin) async throws {
        let account = try await accounts.accountRow(id: accountID)
        guard try await store.list(of: accountID).contains(where: { $0.id == id }) else {
            throw GatehouseError.notFound(.identityNotFound, "error.identityNotFound")
        }
        let proof = try await self.stepUp(account, stepUp, origin: origin)
        let now = clock.now()
        let removed = try await database.db.withTransaction { tx -> IdentityStore.Row? in
            try await spend(proof, accountID: accountID, now: now, on: tx)
            try await IdentityRevocations.enqueue(of: accountID, identity: id, database: database, outbox: outbox, on: tx)
            guard let removed = try await store.remove(id, of: accountID, on: tx) else { return nil }
            guard try await hasWayIn(accountID, on: tx) else {
                throw GatehouseError(.unprocessable, .lastWayIn, LocalizedText("error.lastWayIn"))
            }
            try await audit.record(AuditEvent(.identityUnlinked, by: .account(accountID), account: accountID, origin: origin.audit,
                                              detail: ["provider": removed.provider.rawValue]), on: tx)
            if let notice = notices.securityNotice(.identityUnlinked, [removed.provider.displayName], to: account) { try await outbox.enqueue(notice, on: tx) }
            return removed
        }
        guard removed != nil else { throw GatehouseError.notFound(.identityNotFound, "error.identityNotFound") }
        outbox.signal.wake()
    }

    /// Whether the account, as the transaction sees it, still has a way in: a password, a passkey, an identity, or a
    /// confirmed email or verified phone (a code to it restores a password).
    private func hasWayIn(_ accountID: UUID, on tx: any GatehouseDatabase) async throws -> Bool {
        guard let account = try await accounts.row(id: accountID, on: tx) else { return false }
        if account.passwordHash != PasswordHasher.unusable || account.emailConfirmedAt != nil || account.phoneVerifiedAt != nil { return true }
        if try await !store.list(of: accountID, on: tx).isEmpty { return true }
        return try await PasskeyStore(database: database).count(of: accountID, on: tx) > 0
    }

    // MARK: Apple's notifications

    /// What one of Apple's server-to-server notifications did.
    package enum NotificationOutcome: String, Sendable {
        /// The link ended (`consent-revoked`, `account-delete`) and the account's sessions with it.
        case unlinked
        /// Whether mail to the relay address reaches the person was noted (`email-disabled`, `email-enabled`).
        case noted
        /// Nothing to do: no identity has that `sub`, the event is older than one acted on, or of a type Apple added.
        case ignored
    }

    /// Acts on one of Apple's notifications (docs/social-login.md): the body's `payload` is a JWS Apple signs as it
    /// signs identity tokens (its keys, `iss`, `aud` one of ours); `iat` within a day; each notification (its
    /// `jti`) acted on once; its `events` claim (a JSON string, or an object) names the type, the identity's `sub` and
    /// the event's time.
    package func appleNotification(_ payload: String, origin: RequestOrigin) async throws -> NotificationOutcome {
        guard let verifier = verifiers[.apple] else {
            throw GatehouseError(.notFound, .identityProviderOff, LocalizedText("error.identityProviderOff", [IdentityProvider.apple.displayName]))
        }
        guard !payload.isEmpty, payload.utf8.count <= 16_384 else { throw Self.tokenInvalid(.apple, "malformed") }
        let claims: [String: JSONValue]
        do {
            claims = try await verifier.signedClaims(payload).claims
        } catch let failure as IdentityTokenVerifier.Failure {
            try await audit.countFailure(AuditEvent(.identitySignInRefused, by: .anonymous, account: nil, origin: origin.audit,
                                                    detail: ["provider": "apple", "reason": "notification " + failure.reason]), apart: failure.reason)
            throw Self.tokenInvalid(.apple, failure.reason)
        }
        let now = clock.now()
        guard let iat = IdentityTokenVerifier.seconds(claims["iat"]), iat <= now.timeIntervalSince1970 + settings.skew,
              now.timeIntervalSince1970 - iat <= 86_400 + settings.skew else { throw Self.tokenInvalid(.apple, "expired") }
        let events: [String: JSONValue]
        switch claims["events"] {
        case .string(let text)?:
            guard case .object(let parsed)? = try? JSONValue.parse(Array(text.utf8), maxDepth: 4) else { throw Self.tokenInvalid(.apple, "malformed") }
            events = parsed
        case .object(let object)?: events = object
        default: throw Self.tokenInvalid(.apple, "malformed")
        }
        guard let type = events["type"]?.string, let subject = events["sub"]?.string, !subject.isEmpty else { throw Self.tokenInvalid(.apple, "malformed") }
        // Apple writes the event's time in seconds or in milliseconds.
        let time = IdentityTokenVerifier.seconds(events["event_time"]).map { $0 > 100_000_000_000 ? $0 / 1000 : $0 } ?? iat
        let eventAt = Date(timeIntervalSince1970: time)
        let once = "apple notification " + (claims["jti"]?.string ?? payload)
        let expiresAt = Date(timeIntervalSince1970: iat + 86_400 + settings.skew)
        let linked = try await store.find(.apple, subject: subject)
        return try await database.db.withTransaction { tx in
            guard try await store.spendToken(once, expiresAt: expiresAt, now: now, on: tx) else { return .ignored }
            guard let linked else { return .ignored }
            switch type {
            case "consent-revoked", "account-delete":
                guard try await store.remove(linked.id, of: linked.accountID, on: tx) != nil else { return .ignored }
                try await sessions.revokeAll(accountID: linked.accountID, on: tx)
                try await audit.record(AuditEvent(.identityUnlinked, by: .system(nil), account: linked.accountID, origin: origin.audit,
                                                  detail: ["provider": "apple", "reason": "apple: " + type]), on: tx)
                return .unlinked
            case "email-disabled", "email-enabled":
                return try await store.noteEmailForwarding(linked.id, type == "email-enabled", at: eventAt, on: tx) ? .noted : .ignored
            default:
                return .ignored
            }
        }
    }

    // MARK: The token

    /// The identity a token proves; a refused token is counted (the audit trail) and answered with its reason.
    private func verify(_ provider: IdentityProvider, token: String, nonce: String, origin: RequestOrigin) async throws -> ProviderIdentity {
        guard let verifier = verifiers[provider] else {
            throw GatehouseError(.notFound, .identityProviderOff, LocalizedText("error.identityProviderOff", [provider.displayName]))
        }
        guard !token.isEmpty, token.utf8.count <= 16_384, nonce.utf8.count <= 512 else { throw Self.tokenInvalid(provider, "malformed") }
        do {
            return try await verifier.verify(token, nonce: nonce)
        } catch let failure as IdentityTokenVerifier.Failure {
            try await audit.countFailure(AuditEvent(.identitySignInRefused, by: .anonymous, account: nil, origin: origin.audit,
                                                    detail: ["provider": provider.rawValue, "reason": failure.reason]), apart: failure.reason)
            throw Self.tokenInvalid(provider, failure.reason)
        }
    }

    static func tokenInvalid(_ provider: IdentityProvider, _ reason: String) -> GatehouseError {
        GatehouseError(.invalidInput, .identityTokenInvalid, LocalizedText("error.identityTokenInvalid", [provider.displayName, reason]), field: "idToken")
    }

    static func taken(_ provider: IdentityProvider) -> GatehouseError {
        GatehouseError(.conflict, .identityTaken, LocalizedText("error.identityTaken", [provider.displayName]))
    }

    /// A name as a provider gives it: trimmed, at most 100 characters, nil when empty.
    static func name(_ raw: String?) -> String? {
        guard let trimmed = raw?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return String(trimmed.prefix(100))
    }
}

extension IdentityProvider {
    /// As a person reads it.
    package var displayName: String { self == .apple ? "Apple" : "Google" }
}

extension IdentityTokenVerifier.Failure {
    /// Why, in a word the audit trail and the problem's detail show.
    package var reason: String {
        switch self {
        case .malformed: "malformed"
        case .signature(let why): "signature: \(why)"
        case .issuer: "issuer"
        case .audience: "audience"
        case .expired: "expired"
        case .notYetValid: "issued in the future"
        case .nonce: "nonce"
        }
    }
}
