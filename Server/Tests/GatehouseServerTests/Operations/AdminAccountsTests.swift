import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The admin API over accounts (docs/operators.md, "The admin API"): a business's own code finds, lists, creates,
/// changes and helps accounts with a key of scope `accounts:read` or `accounts:write`, through the services the console
/// uses, every call in the audit trail as the key.
@Suite("The admin API over accounts")
struct AdminAccountsTests {
    static func key(_ app: TestHarness, _ scopes: [AdminScope]) async throws -> (id: String, key: String) {
        let (record, key) = try await app.services.adminKeys.create(name: "crm", scopes: scopes, by: .system("test"))
        return (record.id.uuidString.lowercased(), key)
    }

    static func page(_ app: TestHarness, _ query: AdminAccountQuery, key: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> AdminAccountPage {
        let text = query.values.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0.value)" }.joined(separator: "&")
        let response = try await app.v1.get(AdminAPI.accounts.path + (text.isEmpty ? "" : "?" + text), token: key)
        #expect(response.status == .ok, "\(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: AdminAccountPage.self)
    }

    @Test("the wire walk: create with a password and with an invitation (the person sets the password with its code), read, page through every account newest first, find by email, phone, tag and external id, filter by state and sign-in; change, lock, unlock, end sessions, remove the authenticator app, start a deletion; each call audited as the key", .tags(.engine), arguments: TestEngine.all)
    func walk(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let (keyID, key) = try await Self.key(app, [.accountsRead, .accountsWrite])
            let totp = try await SecondFactorTests.accountWithTOTP(app, email: "totp@example.com", phone: "+79123456701")
            let totpID = try await app.v1.me(totp.token).id
            var made: [UUID] = []
            for index in 0..<5 {
                app.clock.advance(by: 60)
                let created = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(
                    externalId: "crm-\(index)", email: "p\(index)@example.com", emailVerified: true, firstName: "P\(index)", password: "Long-enough-\(index)!"), token: key)
                #expect(created.status == .created, "\(created.text)")
                made.append(try created.decoded(as: AdminAccount.self).id)
            }
            app.clock.advance(by: 60)

            // MUT: an invitation, and the person taking it
            let invited = try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(
                externalId: "crm-invited", email: "Invited@Example.com", emailVerified: true, phone: "8 912 345 67 02", tag: "invited", firstName: "Ivy", invite: true), token: key)
            let invitation = try #require(try await app.v1.messages(to: "invited@example.com").first)
            let code = try await app.v1.code(sentTo: "invited@example.com")
            let noPasswordYet = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "invited@example.com", password: "Chosen-pass-1!"))
            let recovered = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "invited@example.com", code: code, password: "Chosen-pass-1!"))
            let signedIn = try await app.v1.login("invited@example.com", "Chosen-pass-1!")

            // validate the invitation
            let invitedAccount = try invited.decoded(as: AdminAccount.self)
            #expect(invited.status == .created && !invitedAccount.hasPassword && invitedAccount.email == "invited@example.com" && invitedAccount.phone == "+79123456702"
                    && invitedAccount.tag == "invited" && invitedAccount.externalId == "crm-invited" && !invitedAccount.phoneVerified, "\(invited.text)")
            #expect(invitation.subject?.contains("set your password") == true, "\(invitation)")
            try expectProblem(noPasswordYet, .badRequest, .invalidCredentials)
            #expect(recovered.status == .noContent && !signedIn.token.isEmpty, "\(recovered.text)")

            // MUT: reading and finding
            let one = try await app.v1.get(AdminAPI.account.path(id: invitedAccount.id), token: key)
            var walked: [AdminAccount] = []
            var cursor: String?
            repeat {
                let page = try await Self.page(app, AdminAccountQuery(cursor: cursor, limit: 2), key: key)
                #expect(page.items.count <= 2)
                walked += page.items
                cursor = page.nextCursor
            } while cursor != nil
            let byEmail = try await Self.page(app, AdminAccountQuery(email: "P3@example.com"), key: key)
            let byPhone = try await Self.page(app, AdminAccountQuery(phone: "+7 912 345-67-02"), key: key)
            let byTag = try await Self.page(app, AdminAccountQuery(tag: "@Invited"), key: key)
            let byExternal = try await Self.page(app, AdminAccountQuery(externalId: "crm-1"), key: key)
            let signedInRecently = try await Self.page(app, AdminAccountQuery(signedInAfter: WireDates.iso8601String(from: app.clock.now.addingTimeInterval(-1))), key: key)
            let createdEarly = try await Self.page(app, AdminAccountQuery(createdBefore: WireDates.iso8601String(from: app.clock.now.addingTimeInterval(-150))), key: key)

            // validate reading
            let read = try one.decoded(as: AdminAccount.self)
            #expect(read.lastSignInAt.map { abs($0.timeIntervalSince(app.clock.now)) < 1 } == true, "the sign-in is noted: \(one.text)")
            #expect(walked.count == 7 && Set(walked.map(\.id)).count == 7, "every account once: \(walked.map(\.email))")
            #expect(walked.map(\.id).prefix(6) == [invitedAccount.id] + made.reversed(), "newest first")
            #expect(walked.last?.id == totpID && walked.last?.totp == true && walked.last?.sessions == 1, "\(String(describing: walked.last))")
            #expect(byEmail.items.map(\.id) == [made[3]] && byPhone.items.map(\.id) == [invitedAccount.id] && byTag.items.map(\.id) == [invitedAccount.id])
            #expect(byExternal.items.map(\.externalId) == ["crm-1"])
            #expect(signedInRecently.items.map(\.id) == [invitedAccount.id], "\(signedInRecently.items.map(\.email))")
            #expect(Set(createdEarly.items.map(\.id)) == Set([totpID, made[0], made[1], made[2]]), "\(createdEarly.items.map(\.email))")

            // MUT: changing and helping (a code the old address got before the change is dead after it)
            let asked = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "p0@example.com"))
            let oldCode = try await app.v1.code(sentTo: "p0@example.com")
            let changed = try await app.v1.patch(AdminAPI.updateAccount.path(id: made[0]), AdminAccountChange(
                externalId: "", email: "new0@example.com", phone: "+79123456703", phoneVerified: true, firstName: "Paula", lastName: "  "), token: key)
            let stale = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "p0@example.com", code: oldCode, password: "Another-pass-1!"))
            let person = try await app.v1.login("p1@example.com", "Long-enough-1!")
            let locked = try await app.v1.post(AdminAPI.lockAccount.path(id: made[1]), AdminReason(reason: "chargeback under review"), token: key)
            let meWhileLocked = try await app.v1.get(V1.Accounts.me.path, token: person.token)
            let loginWhileLocked = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "p1@example.com", password: "Long-enough-1!"))
            let lockedList = try await Self.page(app, AdminAccountQuery(state: .locked), key: key)
            let unlocked = try await app.v1.post(AdminAPI.unlockAccount.path(id: made[1]), AdminReason(reason: "chargeback settled"), token: key)
            let again = try await app.v1.login("p1@example.com", "Long-enough-1!")
            let ended = try await app.v1.post(AdminAPI.endSessions.path(id: made[1]), AdminReason(reason: "lost phone"), token: key)
            let meAfterEnd = try await app.v1.get(V1.Accounts.me.path, token: again.token)
            let removed = try await app.v1.post(AdminAPI.removeSecondFactors.path(id: totpID), AdminFactorRemoval(reason: "lost the phone, proved by passport", totp: true), token: key)
            let loginWithoutApp = try await app.v1.login("totp@example.com", SecondFactorTests.password)
            let deleting = try await app.v1.post(AdminAPI.deleteAccount.path(id: made[2]), AdminReason(reason: "asked by letter"), token: key)
            let deletingList = try await Self.page(app, AdminAccountQuery(state: .deleting), key: key)

            // validate changing and helping
            let after = try changed.decoded(as: AdminAccount.self)
            #expect(after.email == "new0@example.com" && !after.emailVerified && after.phone == "+79123456703" && after.phoneVerified && after.externalId == nil
                    && after.firstName == "Paula" && after.lastName == nil, "\(changed.text)")
            #expect(asked.status == .accepted, "\(asked.text)")
            try expectProblem(stale, .badRequest, .invalidCode)
            #expect(try locked.decoded(as: AdminAccount.self).state == .locked && (try locked.decoded(as: AdminAccount.self).lockedReason) == "chargeback under review")
            #expect(meWhileLocked.status == .unauthorized, "the lock ended the session")
            try expectProblem(loginWhileLocked, .forbidden, .accountLocked)
            #expect(lockedList.items.map(\.id) == [made[1]])
            #expect(try unlocked.decoded(as: AdminAccount.self).state == .active)
            let endedBody = try ended.decoded(as: AdminAccountChanged.self)
            #expect(endedBody.count == 1 && endedBody.account.sessions == 0 && meAfterEnd.status == .unauthorized, "\(ended.text)")
            let removedBody = try removed.decoded(as: AdminAccountChanged.self)
            #expect(removedBody.count == 1 && !removedBody.account.totp, "\(removed.text)")
            #expect(!loginWithoutApp.token.isEmpty, "no second step once the app is off")
            let deletion = try deleting.decoded(as: AdminAccount.self)
            #expect(deletion.state == .deleting && deletion.erasesAt != nil && deletingList.items.map(\.id) == [made[2]], "\(deleting.text)")

            // the trail: every call as the key
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.accountCreated, .accountRead, .accountsListed, .accountUpdated, .accountLocked,
                                                                                     .accountUnlocked, .sessionsRevoked, .secondFactorRemoved, .accountDeletionRequested,
                                                                                     .recoveryRequested]))
            let byKey = events.filter { $0.actorType == "admin_key" }
            #expect(byKey.allSatisfy { $0.actorID == keyID })
            #expect(Set(byKey.map(\.kind)) == ["account.created", "account.read", "accounts.listed", "account.updated", "account.locked", "account.unlocked",
                                               "sessions.revoked", "second_factor.removed", "account.deletion_requested", "recovery.requested"], "\(Set(byKey.map(\.kind)))")
            #expect(byKey.first { $0.kind == "account.updated" }?.detail["changed"] == "email phone firstName externalId", "a blank lastName that was blank changes nothing")
            #expect(byKey.first { $0.kind == "recovery.requested" }?.detail["reason"] == "invitation")
            #expect(byKey.filter { $0.kind == "account.created" }.allSatisfy { $0.detail["with"] == "admin" })
            let owners = try await app.v1.get(V1.Accounts.myEvents.path, token: try await app.v1.login("+79123456703", "Long-enough-0!").token)
            #expect(owners.text.contains("account.updated"), "the person sees that the business changed their account")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "new0@example.com", password: "Long-enough-0!")),
                              .badRequest, .invalidCredentials)  // an address the business set unverified names no account yet
        }
    }

    @Test("refusals: no key 401; a key without the scope 403; an unknown id 404 and a malformed one 404; a bad filter, cursor, reason or field 400; a taken address 409; a weak password 400; an invitation to an unverified address 400; another account's passkey id 404", arguments: TestEngine.once)
    func refusals(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let (_, writer) = try await Self.key(app, [.accountsRead, .accountsWrite])
            let (_, reader) = try await Self.key(app, [.accountsRead])
            let (_, importer) = try await Self.key(app, [.accountsImport])
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let annID = try await app.v1.me(ann.token).id

            // MUT and validate
            try expectProblem(try await app.v1.get(AdminAPI.accounts.path), .unauthorized, .unauthorized)
            try expectProblem(try await app.v1.get(AdminAPI.accounts.path, token: ann.token), .unauthorized, .unauthorized)
            try expectProblem(try await app.v1.get(AdminAPI.accounts.path, token: importer), .forbidden, .insufficientScope)
            try expectProblem(try await app.v1.post(AdminAPI.lockAccount.path(id: annID), AdminReason(reason: "because"), token: reader), .forbidden, .insufficientScope)
            try expectProblem(try await app.v1.get(AdminAPI.account.path(id: UUID()), token: reader), .notFound, .accountNotFound)
            try expectProblem(try await app.v1.get("/admin/v1/accounts/not-an-id", token: reader), .notFound, .accountNotFound)
            try expectProblem(try await app.v1.post(AdminAPI.lockAccount.path(id: UUID()), AdminReason(reason: "because"), token: writer), .notFound, .accountNotFound)
            for query in ["state=gone", "createdAfter=yesterday", "limit=0", "cursor=%25%25%25", "email=not-an-address"] {
                try expectProblem(try await app.v1.get(AdminAPI.accounts.path + "?" + query, token: reader), .badRequest, .invalidParameter)
            }
            try expectProblem(try await app.v1.post(AdminAPI.lockAccount.path(id: annID), AdminReason(reason: " "), token: writer), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(AdminAPI.lockAccount.path(id: annID), json: "{}", token: writer), .badRequest, .missingParameter)
            try expectProblem(try await app.v1.post(AdminAPI.lockAccount.path(id: annID), json: "{", token: writer), .badRequest, .malformedBody)
            try expectProblem(try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "ANN@example.com"), token: writer), .conflict, .emailTaken)
            try expectProblem(try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "bob@example.com", tag: "Ann"), token: writer), .conflict, .tagTaken)
            try expectProblem(try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(firstName: "Nobody"), token: writer), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "bob@example.com", password: "short"), token: writer), .badRequest, .weakPassword)
            try expectProblem(try await app.v1.post(AdminAPI.createAccount.path, AdminAccountCreation(email: "bob@example.com", invite: true), token: writer), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.patch(AdminAPI.updateAccount.path(id: annID), AdminAccountChange(tag: "x"), token: writer), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(AdminAPI.removeSecondFactors.path(id: annID), AdminFactorRemoval(reason: "stolen phone", passkeyIds: [UUID()]), token: writer),
                              .notFound, .passkeyNotFound)
            let nothing = try await app.v1.post(AdminAPI.removeSecondFactors.path(id: annID), AdminFactorRemoval(reason: "stolen phone"), token: writer)
            #expect(try nothing.decoded(as: AdminAccountChanged.self).count == 0, "no factor: nothing removed, \(nothing.text)")
            #expect(try await app.v1.me(ann.token).email == "ann@example.com", "nothing refused changed the account")
        }
    }
}
