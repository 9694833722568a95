import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// Issues and checks one-time secrets (codes, confirmation tokens, temporary passwords), with
/// every sending limit in one place: resend cooldown, a daily budget per destination and a
/// budget per client address. A secret and the message carrying it are written in one transaction.
package struct VerificationService: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let limits: GatehouseConfiguration.Limits
    package let secrets: Secrets
    package let outbox: Outbox
    package let rateLimiter: RateLimiter
    /// Calling codes SMS may go to (`GATEHOUSE_SMS_COUNTRIES`).
    package let smsCountries: [String]

    package struct IssueRequest {
        package var purpose: VerificationPurpose
        package var destination: String
        package var accountID: UUID?
        package var secretHash: String
        package var ttl: TimeInterval
        /// What carries the secret. Nil for a decoy: a secret nobody was sent, recorded so that
        /// cooldowns and budgets treat an unknown address exactly like a known one.
        package var message: OutgoingMessage?
        package var ip: String?
        /// Also supersede live secrets of this purpose sent to the account's other destinations
        /// (a temporary password by SMS kills the one sent by mail).
        package var supersedeAcrossDestinations = false
    }

    package struct Issued: Sendable {
        /// The outbox message carrying the secret (nil for a decoy).
        package var messageID: UUID?
        package var expiresAt: Date
        package var resendAllowedAt: Date
    }

    /// Enforces the sending limits, supersedes earlier live secrets for the same purpose and
    /// destination, then writes the secret and its message atomically.
    @discardableResult
    package func issue(_ request: IssueRequest) async throws -> Issued {
        let now = clock.now()
        let isPhone = request.destination.hasPrefix("+")
        if isPhone, !smsCountries.contains(where: { request.destination.dropFirst().hasPrefix($0) }) {
            throw GatehouseError.invalid(.phoneCountryNotAllowed, "error.phoneCountry").on(field: "phone")
        }
        if let ip = request.ip {
            try await rateLimiter.hit("send-ip", key: ip, limit: limits.codeRequestsPerIP, window: limits.codeRequestsPerIPWindow)
        }
        let db = database.db
        if limits.resendCooldown > 0, let latest = try await VerificationCodeModel.query(on: db)
            .filter(\.$destination == request.destination)
            .filter(\.$purpose == request.purpose.rawValue)
            .filter(\.$createdAt > now.addingTimeInterval(-limits.resendCooldown))
            .sort(\.$createdAt, .descending)
            .first() {
            let wait = latest.createdAt.addingTimeInterval(limits.resendCooldown).timeIntervalSince(now)
            throw GatehouseError.rateLimited(.resendTooSoon, retryAfter: wait, "error.resendTooSoon")
        }
        let dailyLimit = isPhone ? limits.smsPerPhonePerDay : limits.emailsPerAddressPerDay
        let sentToday = try await VerificationCodeModel.query(on: db)
            .filter(\.$destination == request.destination)
            .filter(\.$createdAt > now.addingTimeInterval(-86_400))
            .sort(\.$createdAt, .ascending)
            .all()
        // One client address may spend only part of a destination's daily budget, so a stranger
        // cannot use up the owner's codes for the day.
        if let ip = request.ip {
            let fromHere = sentToday.filter { $0.ip == ip }
            let cap = limits.codeRequestsPerAddressPerDestination
            if fromHere.count >= cap {
                let wait = fromHere[fromHere.count - cap].createdAt.addingTimeInterval(86_400).timeIntervalSince(now)
                throw GatehouseError.rateLimited(.rateLimited, retryAfter: wait, "error.dailyLimit")
            }
        }
        if sentToday.count >= dailyLimit {
            let wait = sentToday[sentToday.count - dailyLimit].createdAt.addingTimeInterval(86_400).timeIntervalSince(now)
            throw GatehouseError.rateLimited(.rateLimited, retryAfter: wait, "error.dailyLimit")
        }

        let code = VerificationCodeModel()
        code.id = OrderedID.make()
        code.purpose = request.purpose.rawValue
        code.destination = request.destination
        code.accountID = request.accountID
        code.secretHash = request.secretHash
        code.attempts = 0
        code.maxAttempts = limits.codeMaxAttempts
        code.createdAt = now
        code.expiresAt = now.addingTimeInterval(request.ttl)
        code.ip = request.ip
        let messageID: UUID? = try await db.withTransaction { tx in
            // Only the newest secret works: a resend kills the one before.
            var previous = VerificationCodeModel.query(on: tx)
                .filter(\.$purpose == request.purpose.rawValue)
                .filter(\.$consumedAt == nil)
                .filter(\.$expiresAt > now)
            if request.supersedeAcrossDestinations, let accountID = request.accountID {
                previous = previous.group(.or) { $0.filter(\.$destination == request.destination).filter(\.$accountID == accountID) }
            } else {
                previous = previous.filter(\.$destination == request.destination)
            }
            try await previous.set(\.$expiresAt, to: now).update()
            try await code.create(on: tx)
            guard let message = request.message else { return nil }
            return try await outbox.enqueue(message, on: tx)
        }
        if messageID != nil { outbox.signal.wake() }
        return Issued(messageID: messageID, expiresAt: code.expiresAt, resendAllowedAt: now.addingTimeInterval(limits.resendCooldown))
    }

    /// Checks a numeric code for (purpose, destination). Every guess first takes one attempt with a
    /// conditional update (`attempts < max_attempts`), and only a guess that got its attempt is
    /// compared: however many guesses arrive at once, at most `maxAttempts` comparisons ever
    /// happen per code. Returns the live code row; the caller consumes it with `consume`.
    package func check(code: String, purpose: VerificationPurpose, destination: String) async throws -> VerificationCodeModel {
        let now = clock.now()
        guard let row = try await VerificationCodeModel.query(on: database.db)
            .filter(\.$destination == destination)
            .filter(\.$purpose == purpose.rawValue)
            .filter(\.$consumedAt == nil)
            .sort(\.$createdAt, .descending)
            .sort(\.$id, .descending)
            .first()
        else {
            throw GatehouseError.invalid(.invalidCode, "error.invalidCode")
        }
        if row.attempts >= row.maxAttempts {
            throw GatehouseError.invalid(.codeAttemptsExhausted, "error.codeAttemptsExhausted")
        }
        if row.expiresAt <= now {
            throw GatehouseError.invalid(.codeExpired, "error.codeExpired")
        }
        // Take the slot first: the row read above may be stale by now.
        guard let attempts = try await VerificationCodeStore(database: database).takeAttempt(row.id!) else {
            throw GatehouseError.invalid(.codeAttemptsExhausted, "error.codeAttemptsExhausted")
        }
        row.attempts = attempts
        let candidate = code.trimmingCharacters(in: .whitespaces)
        let expected = secrets.codeHash(candidate, purpose: purpose.rawValue, destination: destination)
        guard Secrets.constantTimeEquals(expected, row.secretHash) else {
            if attempts >= row.maxAttempts {
                throw GatehouseError.invalid(.codeAttemptsExhausted, "error.codeAttemptsExhausted")
            }
            throw GatehouseError(.invalidInput, .invalidCode, LocalizedText("error.invalidCode"), attemptsLeft: row.maxAttempts - attempts)
        }
        return row
    }

    /// Marks a secret used, inside the caller's transaction. Throws if someone used it first.
    package func consume(_ row: VerificationCodeModel, on db: any GatehouseDatabase) async throws {
        guard try await VerificationCodeStore(database: database).consume(row.id!, at: clock.now(), on: db) else {
            throw GatehouseError.invalid(.invalidCode, "error.invalidCode")
        }
    }

    package func purgeExpired() async throws {
        // Keep a day of history: the daily budgets count it.
        let cutoff = clock.now().addingTimeInterval(-2 * 86_400)
        try await VerificationCodeModel.query(on: database.db).filter(\.$expiresAt < cutoff).delete()
    }

    package init(database: DatabaseProvider, clock: GatehouseClock, limits: GatehouseConfiguration.Limits, secrets: Secrets, outbox: Outbox, rateLimiter: RateLimiter, smsCountries: [String]) {
        self.database = database
        self.clock = clock
        self.limits = limits
        self.secrets = secrets
        self.outbox = outbox
        self.rateLimiter = rateLimiter
        self.smsCountries = smsCountries
    }
}
