import FluentKit
import Foundation
import Logging
import Metrics
import NIOConcurrencyHelpers
import ServiceLifecycle
import SQLKit

/// The background service that drains the outbox: claims due messages (so several instances
/// never send one twice at once), hands them to their channel, and retries failures with
/// exponential backoff. It also purges expired sessions, codes and counters.
package final class OutboxDeliverer: Service, @unchecked Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Delivery
    package let environment: GatehouseConfiguration.Environment
    package let smsChannel: any DeliveryChannel
    package let emailChannel: any DeliveryChannel
    package let pushChannel: any DeliveryChannel
    package let webhookChannel: any DeliveryChannel
    /// Revokes a token at the identity provider that issued it (Apple's refresh tokens when an account is deleted).
    package let revocationChannel: any DeliveryChannel
    package let signal: OutboxSignal
    package let logger: Logger
    package let maintenance: @Sendable () async throws -> Void
    /// Composes the queued pushes into the outbox (`PushComposition`), run by the push lane before it sends.
    package let composePushes: (@Sendable () async -> Void)?
    /// A claim lasts this long; a crashed instance's claims expire and another instance retries.
    /// Twice the longest a delivery attempt may take (a message is tried only within the first half
    /// of its claim), so no instance claims a message another one is still sending.
    package var claimDuration: TimeInterval { Self.claimDuration(settings) }

    /// `claimDuration` for `settings`: `claimFloor` (`GATEHOUSE_DELIVERY_CLAIM_FLOOR_SECONDS`) or twice the longest attempt, whichever is longer.
    package static func claimDuration(_ settings: GatehouseConfiguration.Delivery) -> TimeInterval {
        let longest = max(Double(max(settings.smtp.timeoutSeconds, settings.smsHTTP.timeoutSeconds, settings.push.timeoutSeconds)), settings.webhooks.timeout)
        return max(settings.claimFloor, longest * 2)
    }
    private let depthGauge = Gauge(label: "gatehouse_outbox_depth")
    private let sentCounter = Counter(label: "gatehouse_outbox_delivered_total")
    private let failedCounter = Counter(label: "gatehouse_outbox_failures_total")
    private var lastMaintenance: Date = .distantPast

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Delivery,
         environment: GatehouseConfiguration.Environment, smsChannel: any DeliveryChannel, emailChannel: any DeliveryChannel,
         pushChannel: any DeliveryChannel, webhookChannel: any DeliveryChannel, revocationChannel: any DeliveryChannel, signal: OutboxSignal,
         logger: Logger, composePushes: (@Sendable () async -> Void)? = nil, maintenance: @escaping @Sendable () async throws -> Void) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.environment = environment
        self.smsChannel = smsChannel
        self.emailChannel = emailChannel
        self.pushChannel = pushChannel
        self.webhookChannel = webhookChannel
        self.revocationChannel = revocationChannel
        self.signal = signal
        self.logger = logger
        self.maintenance = maintenance
        self.composePushes = composePushes
    }

    package func run() async throws {
        let stopping = NIOLockedValueBox(false)
        await withGracefulShutdownHandler {
            await self.database.waitUntilReady(unless: stopping)
            // One lane per channel, so a stalled mail server (each attempt can take
            // SMTP_TIMEOUT_SECONDS) never holds back SMS codes, nor a slow SMS gateway the mail.
            await withTaskGroup(of: Void.self) { lanes in
                for (lane, kind) in OutgoingMessage.Kind.lanes.enumerated() {
                    lanes.addTask {
                        while !stopping.withLockedValue({ $0 }) && !Task.isCancelled {
                            await self.deliverDue(kind: kind)
                            // The depth of the whole outbox, and the maintenance, once a round: the first lane's.
                            if lane == 0 {
                                await self.recordDepth()
                                await self.runMaintenanceIfDue()
                            }
                            await self.signal.wait(lane: lane, timeout: self.settings.pollInterval)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            stopping.withLockedValue { $0 = true }
            self.signal.wake()
        }
        logger.info("outbox deliverer stopped")
    }

    /// Delivers every message that is due now, one kind after the other. Also called by tests
    /// after moving the clock.
    package func deliverDue() async {
        for kind in OutgoingMessage.Kind.lanes {
            await deliverDue(kind: kind)
        }
        await recordDepth()
    }

    /// The outbox's depth (every pending message, of any kind) for the metrics.
    private func recordDepth() async {
        do {
            depthGauge.record(try await OutboxMessageModel.query(on: database.db).filter(\.$status == OutboxMessageModel.Status.pending.rawValue).count())
        } catch {
            logger.error("outbox: cannot count pending messages: \(String(describing: error))")
        }
    }

    /// Delivers every message of one kind that is due now (pushes: after composing the queued ones).
    package func deliverDue(kind: OutgoingMessage.Kind) async {
        if kind == .push, let composePushes { await composePushes() }
        do {
            // Until fewer are due than a claim takes, or a whole claim failed (those wait for their retry).
            while true {
                let (due, until) = try await claimDue(kind: kind, now: clock.now())
                // A claim holds for `claimDuration`, twice the longest attempt: once half of it has gone on
                // the claim's first messages (a stalled service), the rest are let go and claimed anew, so
                // that none is sent after its claim ran out, when another instance may be sending it too.
                let claimed = ContinuousClock.now
                var delivered = 0
                for (index, message) in due.enumerated() {
                    if ContinuousClock.now - claimed > .seconds(claimDuration / 2) {
                        try await release(due[index...].map(\.id), claimedUntil: until)
                        break
                    }
                    if await deliver(message) { delivered += 1 }
                }
                if due.count < Self.claimBatch || delivered == 0 { break }
            }
        } catch {
            logger.error("outbox: cannot read due \(kind.rawValue) messages: \(String(describing: error))")
        }
    }

    /// A message claimed for delivery, as the deliverer reads it.
    private struct Claimed {
        var id: UUID
        var kind: OutgoingMessage.Kind
        var destination: String
        var subject: String?
        var body: String
        var code: String?
        var attempts: Int
        var due: Date
    }

    /// How many due messages one statement claims.
    private static let claimBatch = 20

    /// Claims up to `claimBatch` messages of `kind` that are due now — pending, unclaimed (or their
    /// claim expired) — in one statement that reads them too, oldest due first. On PostgreSQL the
    /// rows are locked as they are picked and rows another deliverer is claiming are skipped, and
    /// a row another instance claimed or tried since this statement began fails the re-check of the
    /// conditions, so no two instances send one message at once. A webhook is due only when no
    /// earlier one of its endpoint and account is still pending: a receiver that was away hears an
    /// account's events in the order they happened (a delivery given up on no longer holds the
    /// later ones back; retried by hand, it arrives after them).
    private func claimDue(kind: OutgoingMessage.Kind, now: Date) async throws -> (messages: [Claimed], until: Date) {
        let db = database.db
        let until = now.addingTimeInterval(claimDuration)
        let ordered: SQLQueryString = kind == .webhook ? """
             AND NOT EXISTS (SELECT 1 FROM outbox_messages e WHERE e.ordering_key = m.ordering_key AND e.status = 'pending' AND e.id < m.id)
            """ : ""
        let due: SQLQueryString = """
            m.kind = \(bind: kind.rawValue) AND m.status = 'pending' AND m.next_attempt_at <= \(bind: now)
              AND (m.claimed_until IS NULL OR m.claimed_until < \(bind: now))\(ordered)
            """
        // First a read: a claim is a write, and on SQLite every write, even of no row, takes the one writer's lock —
        // five lanes polling each second would hold back the requests' writes.
        guard try await !db.preparedRows("SELECT 1 AS due FROM outbox_messages m WHERE \(due) LIMIT 1").isEmpty else { return ([], until) }
        let rows = try await db.preparedRows("""
            UPDATE outbox_messages SET claimed_until = \(bind: until)
            WHERE id IN (SELECT m.id FROM outbox_messages m WHERE \(due)
                         ORDER BY \(unsafeRaw: kind == .webhook ? "m.id" : "m.next_attempt_at") LIMIT \(literal: Self.claimBatch)\
                         \(unsafeRaw: db.isPostgres ? " FOR UPDATE SKIP LOCKED" : ""))
              AND status = 'pending' AND next_attempt_at <= \(bind: now) AND (claimed_until IS NULL OR claimed_until < \(bind: now))
            RETURNING id, destination, subject, body, code, attempts, next_attempt_at
            """)
        let claimed = try rows.map { row in
            Claimed(id: try row.decode(column: "id", as: UUID.self), kind: kind,
                    destination: try row.decode(column: "destination", as: String.self), subject: try row.decode(column: "subject", as: String?.self),
                    body: try row.decode(column: "body", as: String.self), code: try row.decode(column: "code", as: String?.self),
                    attempts: try row.decode(column: "attempts", as: Int.self), due: try row.decode(column: "next_attempt_at", as: Date.self))
        }
        // RETURNING keeps no order: webhooks in the order they were written, the rest oldest due first.
        return (kind == .webhook ? claimed.sorted { $0.id < $1.id } : claimed.sorted { ($0.due, $0.id) < ($1.due, $1.id) }, until)
    }

    /// Lets go of claimed messages not yet tried, unless their claim is no longer this one's.
    private func release(_ ids: [UUID], claimedUntil until: Date) async throws {
        guard !ids.isEmpty else { return }
        let db = database.db
        _ = try await db.preparedRows("""
            UPDATE outbox_messages SET claimed_until = NULL
            WHERE \(SQLQueryString.isAny("id", ids, postgres: db.isPostgres)) AND claimed_until = \(bind: until) AND status = 'pending'
            """)
    }

    /// Waits up to `firstAttemptWait` for the first delivery attempt of a message, and throws
    /// the channel's text if the channel refused it for good. A transient failure or a slow
    /// channel returns normally: the outbox keeps retrying.
    package func awaitFirstAttempt(messageID: UUID) async throws {
        let deadline = ContinuousClock.now.advanced(by: settings.firstAttemptWait)
        while ContinuousClock.now < deadline {
            guard let row = try await OutboxMessageModel.find(messageID, on: database.db) else { return }
            if row.status == OutboxMessageModel.Status.failed.rawValue {
                throw GatehouseError(.invalidInput, .deliveryFailed, LocalizedText("error.deliveryFailed", [row.lastError ?? ""]))
            }
            if row.attempts > 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Hands a claimed message to its channel and records the outcome; whether it was delivered.
    @discardableResult
    private func deliver(_ row: Claimed) async -> Bool {
        let channel = switch row.kind {
        case .sms: smsChannel
        case .email: emailChannel
        case .push: pushChannel
        case .webhook: webhookChannel
        case .revocation: revocationChannel
        }
        let message = OutgoingMessage(kind: row.kind, destination: row.destination, subject: row.subject, body: row.body, code: row.code, id: row.id)
        var log = logger
        log[metadataKey: "outbox.message"] = "\(row.id)"
        let attempts = row.attempts + 1
        do {
            try await channel.deliver(message)
            // Delivered: in production the database need not keep the secret it carried.
            let clear = channel.name != "dev" && environment == .production
            do {
                _ = try await database.db.preparedRows("""
                    UPDATE outbox_messages SET status = 'sent', sent_at = \(bind: clock.now()), channel = \(bind: channel.name), claimed_until = NULL,
                        attempts = \(bind: attempts), last_error = NULL\(unsafeRaw: clear ? ", body = '', code = NULL" : "")
                    WHERE id = \(bind: row.id)
                    """)
            } catch {
                log.error("outbox: cannot record the delivery: \(String(describing: error))")
                return true
            }
            sentCounter.increment()
            log.info("outbox: delivered \(row.kind.rawValue) via \(channel.name)")
            return true
        } catch {
            failedCounter.increment()
            let permanent: Bool
            let lastError: String
            var notBefore: TimeInterval = 0
            if case DeliveryError.permanent(let text) = error {
                permanent = true
                lastError = String(text.prefix(500))
            } else {
                permanent = false
                lastError = String(String(describing: error).prefix(500))
                if case DeliveryError.later(_, let after) = error { notBefore = min(after, 86_400) }
            }
            let schedule = settings.webhooks.retrySchedule
            let status: OutboxMessageModel.Status
            var next = row.due
            if permanent || (row.kind == .webhook ? attempts > schedule.count : attempts >= settings.maxAttempts) {
                status = .failed
                log.error("outbox: giving up on \(row.kind.rawValue) after \(attempts) attempt(s): \(lastError)")
            } else {
                // Exponential, and never sooner than the service asked (`Retry-After`).
                // A webhook on its own schedule (about a day in all, docs/webhooks.md).
                let delay = row.kind == .webhook ? max(notBefore, schedule[attempts - 1])
                    : max(notBefore, min(settings.maxRetryDelay, settings.retryBaseDelay * pow(2, Double(attempts - 1))))
                status = .pending
                next = clock.now().addingTimeInterval(delay)
                log.warning("outbox: \(row.kind.rawValue) attempt \(attempts) failed, retrying in \(Int(delay)) s: \(lastError)")
            }
            do {
                _ = try await database.db.preparedRows("""
                    UPDATE outbox_messages SET status = \(bind: status.rawValue), attempts = \(bind: attempts), claimed_until = NULL,
                        channel = \(bind: channel.name), last_error = \(bind: lastError), next_attempt_at = \(bind: next)
                    WHERE id = \(bind: row.id)
                    """)
            } catch {
                log.error("outbox: cannot record the failed attempt: \(String(describing: error))")
            }
            return false
        }
    }

    private func runMaintenanceIfDue() async {
        let now = Date()
        guard now.timeIntervalSince(lastMaintenance) > 60 else { return }
        lastMaintenance = now
        do {
            try await maintenance()
        } catch {
            logger.warning("maintenance failed: \(String(describing: error))")
        }
    }
}
