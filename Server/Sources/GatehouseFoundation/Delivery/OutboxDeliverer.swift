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
    /// Always longer than a delivery attempt may take, so no instance claims a message another
    /// one is still sending.
    package var claimDuration: TimeInterval {
        max(120, max(Double(max(settings.smtp.timeoutSeconds, settings.smsHTTP.timeoutSeconds)), settings.webhooks.timeout) * 2)
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
            while true {
                let now = clock.now()
                let due = kind == .webhook ? try await dueInOrder(now: now) : try await OutboxMessageModel.query(on: database.db)
                    .filter(\.$kind == kind.rawValue)
                    .filter(\.$status == OutboxMessageModel.Status.pending.rawValue)
                    .filter(\.$nextAttemptAt <= now)
                    .group(.or) { $0.filter(\.$claimedUntil == nil).filter(\.$claimedUntil < now) }
                    .sort(\.$nextAttemptAt, .ascending)
                    .limit(20)
                    .all()
                if due.isEmpty { break }
                var delivered = 0
                for message in due where try await claim(message, now: now) {
                    await deliver(message)
                    delivered += 1
                }
                if delivered == 0 { break }
            }
        } catch {
            logger.error("outbox: cannot read due \(kind.rawValue) messages: \(String(describing: error))")
        }
    }

    /// Due webhooks, each only when no earlier one of its endpoint and account is still pending: a receiver that was
    /// away hears an account's events in the order they happened. (A delivery given up on no longer holds the later
    /// ones back; retried by hand, it arrives after them.)
    private func dueInOrder(now: Date) async throws -> [OutboxMessageModel] {
        let ids = try await database.sql.raw("""
            SELECT id FROM outbox_messages m
            WHERE m.kind = 'webhook' AND m.status = 'pending' AND m.next_attempt_at <= \(bind: now)
              AND (m.claimed_until IS NULL OR m.claimed_until < \(bind: now))
              AND NOT EXISTS (SELECT 1 FROM outbox_messages e WHERE e.ordering_key = m.ordering_key AND e.status = 'pending' AND e.id < m.id)
            ORDER BY m.id LIMIT 20
            """).all().map { try $0.decode(column: "id", as: UUID.self) }
        guard !ids.isEmpty else { return [] }
        return try await OutboxMessageModel.query(on: database.db).filter(\.$id ~~ ids).sort(\.$id, .ascending).all()
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

    /// Claims a due message: still pending, unclaimed (or its claim expired) and still due. The
    /// last matters: another deliverer that read the same list may have tried it meanwhile and
    /// set its next attempt later (found when a push's 429 was sent again at once).
    private func claim(_ message: OutboxMessageModel, now: Date) async throws -> Bool {
        let rows = try await database.sql.raw("""
            UPDATE outbox_messages SET claimed_until = \(bind: now.addingTimeInterval(claimDuration))
            WHERE id = \(bind: message.id!) AND status = 'pending' AND (claimed_until IS NULL OR claimed_until < \(bind: now))
              AND next_attempt_at <= \(bind: now)
            RETURNING id
            """).all()
        return !rows.isEmpty
    }

    private func deliver(_ row: OutboxMessageModel) async {
        let kind = OutgoingMessage.Kind(rawValue: row.kind) ?? .email
        let channel = switch kind {
        case .sms: smsChannel
        case .email: emailChannel
        case .push: pushChannel
        case .webhook: webhookChannel
        case .revocation: revocationChannel
        }
        let message = OutgoingMessage(kind: kind, destination: row.destination, subject: row.subject, body: row.body, code: row.code, id: row.id)
        var log = logger
        log[metadataKey: "outbox.message"] = "\(row.id!)"
        do {
            try await channel.deliver(message)
            row.status = OutboxMessageModel.Status.sent.rawValue
            row.sentAt = clock.now()
            row.channel = channel.name
            row.claimedUntil = nil
            row.attempts += 1
            row.lastError = nil
            if channel.name != "dev" && environment == .production {
                // Delivered: the database need not keep the secret it carried.
                row.body = ""
                row.code = nil
            }
            try await row.update(on: database.db)
            sentCounter.increment()
            log.info("outbox: delivered \(row.kind) via \(channel.name)")
        } catch {
            failedCounter.increment()
            row.attempts += 1
            row.claimedUntil = nil
            row.channel = channel.name
            let permanent: Bool
            var notBefore: TimeInterval = 0
            if case DeliveryError.permanent(let text) = error {
                permanent = true
                row.lastError = String(text.prefix(500))
            } else {
                permanent = false
                row.lastError = String(String(describing: error).prefix(500))
                if case DeliveryError.later(_, let after) = error { notBefore = min(after, 86_400) }
            }
            let schedule = settings.webhooks.retrySchedule
            if permanent || (kind == .webhook ? row.attempts > schedule.count : row.attempts >= settings.maxAttempts) {
                row.status = OutboxMessageModel.Status.failed.rawValue
                log.error("outbox: giving up on \(row.kind) after \(row.attempts) attempt(s): \(row.lastError ?? "")")
            } else {
                // Exponential, and never sooner than the service asked (`Retry-After`).
                // A webhook on its own schedule (about a day in all, docs/webhooks.md).
                let delay = kind == .webhook ? max(notBefore, schedule[row.attempts - 1])
                    : max(notBefore, min(settings.maxRetryDelay, settings.retryBaseDelay * pow(2, Double(row.attempts - 1))))
                row.nextAttemptAt = clock.now().addingTimeInterval(delay)
                log.warning("outbox: \(row.kind) attempt \(row.attempts) failed, retrying in \(Int(delay)) s: \(row.lastError ?? "")")
            }
            do {
                try await row.update(on: database.db)
            } catch {
                log.error("outbox: cannot record the failed attempt: \(String(describing: error))")
            }
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
