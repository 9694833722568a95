import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

/// `/v1/realtime` on the `WebSocketHost`: one socket per device, sending the account's events in
/// order (docs/messenger.md, "Realtime").
package struct RealtimeEndpoint: WebSocketEndpoint {
    package let hub: RealtimeHub
    package let limits: WebSocketLimits
    package var path: String { V1.Realtime.path }

    package init(hub: RealtimeHub, settings: GatehouseConfiguration.Messenger) {
        self.hub = hub
        self.limits = WebSocketLimits(
            maxMessageBytes: settings.realtimeMaxFrameBytes, pingInterval: settings.realtimePingInterval, idleTimeout: settings.realtimeIdleTimeout,
            maxConnections: settings.realtimeMaxConnections, maxInFlightPerConnection: 1
        )
    }

    package func open(_ opening: WebSocketOpening) async -> (any WebSocketSession)? {
        let since = Self.since(opening.query)
        let session = RealtimeSession(hub: hub, since: since)
        if let header = opening.headers.first(name: "authorization") {
            let parts = header.split(separator: " ", maxSplits: 1)
            let token = parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            await session.authenticate(token: token)
        }
        return session
    }

    /// `since=SEQ` from the query, when it is a number.
    package static func since(_ query: String?) -> Int64? {
        guard let query else { return nil }
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "since", let value = Int64(parts[1]), value >= 0 { return value }
        }
        return nil
    }
}

/// Every realtime socket of this instance by account, and what tells them to send: the bus's
/// events, account changes (a revoked session closes its sockets) and gaps (all catch up).
package final class RealtimeHub: Sendable {
    package let log: EventLog
    /// Reads the token a socket shows (opaque or signed).
    package let bearer: BearerTokens
    package let authTimeout: Duration
    package let logger: Logger
    private let registry = NIOLockedValueBox<[UUID: [ObjectIdentifier: RealtimeSession]]>([:])
    private let subscriptions = NIOLockedValueBox<[BusSubscription]>([])

    package init(log: EventLog, bearer: BearerTokens, authTimeout: Duration, logger: Logger) {
        self.log = log
        self.bearer = bearer
        self.authTimeout = authTimeout
        self.logger = logger
        let bus = log.bus
        let made = [
            bus.subscribe(topic: EventLog.topic, account: nil) { [weak self] event in self?.deliver(event) },
            bus.subscribe(topic: BusTopic.accountChanged, account: nil) { [weak self] event in
                if let account = event.account { self?.accountChanged(account) }
            },
        ]
        subscriptions.withLockedValue { $0 = made }
        bus.onGap { [weak self] in self?.gap() }
    }

    package func register(_ session: RealtimeSession, account: UUID) {
        registry.withLockedValue { $0[account, default: [:]][ObjectIdentifier(session)] = session }
    }

    package func unregister(_ session: RealtimeSession, account: UUID) {
        registry.withLockedValue { registry in
            registry[account]?[ObjectIdentifier(session)] = nil
            if registry[account]?.isEmpty == true { registry[account] = nil }
        }
    }

    private func sessions(of account: UUID) -> [RealtimeSession] {
        registry.withLockedValue { $0[account].map { Array($0.values) } ?? [] }
    }

    /// An event's notification: `seq`, then the frame when it fitted.
    private func deliver(_ event: BusEvent) {
        guard let account = event.account else { return }
        let targets = sessions(of: account)
        guard !targets.isEmpty else { return }
        let body = event.body
        let newline = body.firstIndex(of: "\n")
        guard let seq = Int64(body[..<(newline ?? body.endIndex)]) else { return }
        let frame = newline.map { String(body[body.index(after: $0)...]) }
        for session in targets { session.notified(seq: seq, frame: frame) }
    }

    private func accountChanged(_ account: UUID) {
        for session in sessions(of: account) { session.checkSession() }
    }

    private func gap() {
        let all = registry.withLockedValue { $0.values.flatMap(\.values) }
        for session in all { session.notified(seq: nil, frame: nil) }
    }
}

/// One realtime socket: who it is for, the last event it sent, and whether it is catching up
/// from the table. Frames go out in `seq` order: every send happens under the state's lock.
package final class RealtimeSession: WebSocketSession {
    private enum Phase { case awaitingAuth, live, closed }

    private struct State {
        var phase = Phase.awaitingAuth
        var account: UUID?
        var sessionID: UUID?
        var expiresAt: Date?
        var connection: WebSocketConnection?
        /// The last event sent.
        var lastSent: Int64 = 0
        /// The highest event announced (the table may not show it yet).
        var announced: Int64 = 0
        var pumping = false
        var rejected = false
        var timer: Scheduled<Void>?
    }

    package let hub: RealtimeHub
    package let since: Int64?
    private let state = NIOLockedValueBox(State())

    package init(hub: RealtimeHub, since: Int64?) {
        self.hub = hub
        self.since = since
    }

    /// Checks a token (from the header before the upgrade, or the first frame after it).
    package func authenticate(token: String) async {
        let found = try? await hub.bearer.authenticate(token)
        state.withLockedValue { state in
            if let found {
                state.account = found.session.accountID
                state.sessionID = found.session.id
                state.expiresAt = found.session.expiresAt
            } else {
                state.rejected = true
            }
        }
    }

    package func opened(_ connection: WebSocketConnection) {
        let (rejected, authenticated) = state.withLockedValue { state -> (Bool, Bool) in
            state.connection = connection
            return (state.rejected, state.account != nil)
        }
        if rejected { return close(V1.Realtime.CloseCode.unauthorized, "invalid token") }
        if authenticated {
            start()
        } else {
            let timer = connection.loop.scheduleTask(in: TimeAmount(hub.authTimeout)) { [weak self] in
                guard let self, self.state.withLockedValue({ $0.phase == .awaitingAuth }) else { return }
                self.close(V1.Realtime.CloseCode.unauthorized, "no auth frame")
            }
            state.withLockedValue { $0.timer = timer }
        }
    }

    package func respond(to message: WebSocketMessage, on connection: WebSocketConnection) async -> String? {
        let phase = state.withLockedValue { $0.phase }
        guard phase == .awaitingAuth else {
            return Self.text(.error(code: "unexpected_frame", message: "this socket only sends; authenticate once, with the header or the first frame"))
        }
        guard case .text(let text) = message, let frame = try? V1.decoder.decode(RealtimeFrame.self, from: Data(text.utf8)),
              case .auth(let token) = frame
        else {
            close(V1.Realtime.CloseCode.unauthorized, "the first frame must be {\"type\":\"auth\",\"token\":\"…\"}")
            return nil
        }
        state.withLockedValue { $0.timer?.cancel() }
        await authenticate(token: token)
        if state.withLockedValue({ $0.rejected }) {
            close(V1.Realtime.CloseCode.unauthorized, "invalid token")
        } else {
            start()
        }
        return nil
    }

    package func closed() {
        let account = state.withLockedValue { state -> UUID? in
            state.phase = .closed
            state.timer?.cancel()
            state.timer = nil
            state.connection = nil
            return state.account
        }
        if let account { hub.unregister(self, account: account) }
    }

    /// Authenticated: registers for events, closes at the session's expiry, sends `ready` and
    /// what was missed since `since`.
    private func start() {
        guard let (account, connection, expiresAt) = state.withLockedValue({ state -> (UUID, WebSocketConnection, Date)? in
            guard state.phase == .awaitingAuth, let account = state.account, let connection = state.connection, let expires = state.expiresAt else { return nil }
            state.phase = .live
            state.pumping = true  // until the starting point is known, announcements only raise `announced`
            return (account, connection, expires)
        }) else { return }
        hub.register(self, account: account)
        let left = max(0, expiresAt.timeIntervalSince(hub.bearer.sessions.clock.now()))
        let timer = connection.loop.scheduleTask(in: .milliseconds(Int64(min(left, 86_400 * 365) * 1000))) { [weak self] in
            guard let self else { return }
            self.close(V1.Realtime.CloseCode.sessionEnded, "session expired")
        }
        state.withLockedValue { $0.timer = timer }
        run {
            let bounds: (last: Int64, oldest: Int64?)
            do {
                bounds = try await self.hub.log.bounds(of: account)
            } catch {
                // Without a starting point the socket cannot promise order: the client reconnects.
                self.close(1011, "try again")
                throw error
            }
            var resync = false
            if let since = self.since, since != bounds.last {
                // Events after `since` must all still be kept; otherwise the client reloads.
                resync = since > bounds.last || (bounds.oldest.map { $0 > since + 1 } ?? true)
            }
            let start = self.since.flatMap { resync ? nil : $0 } ?? bounds.last
            self.state.withLockedValue { state in
                state.lastSent = start
                state.announced = max(state.announced, bounds.last)
                state.connection?.send(Self.text(.ready(seq: bounds.last)))
                if resync { state.connection?.send(Self.text(.resync(seq: bounds.last))) }
            }
            try await self.pump(account: account)
        }
    }

    /// An event was announced (`seq` nil: something may have been missed).
    package func notified(seq: Int64?, frame: String?) {
        let needsPump = state.withLockedValue { state -> Bool in
            guard state.phase == .live else { return false }
            guard let seq else {
                if state.pumping { return false }
                state.pumping = true
                return true
            }
            state.announced = max(state.announced, seq)
            if state.pumping || seq <= state.lastSent { return false }
            if seq == state.lastSent + 1, let frame {
                state.connection?.send(frame)
                state.lastSent = seq
                return false
            }
            state.pumping = true
            return true
        }
        if needsPump, let account = state.withLockedValue({ $0.account }) {
            run { try await self.pump(account: account) }
        }
    }

    /// Sends what the table holds after `lastSent` until it has sent everything announced.
    /// An announcement can come before its transaction is visible (an account change announces
    /// inside a transaction it does not commit): then it reads again, a little later.
    private func pump(account: UUID) async throws {
        var waits = 0
        while true {
            let after = state.withLockedValue { $0.lastSent }
            let batch = try await hub.log.events(of: account, after: after, limit: 256)
            let done = state.withLockedValue { state -> Bool in
                guard state.phase == .live else { return true }
                for event in batch where event.seq == state.lastSent + 1 {
                    state.connection?.send(event.frame)
                    state.lastSent = event.seq
                }
                if !batch.isEmpty { return false }
                if state.announced <= state.lastSent || waits >= 40 {
                    state.announced = state.lastSent
                    state.pumping = false
                    return true
                }
                return false
            }
            if done { return }
            if batch.isEmpty {
                waits += 1
                try await Task.sleep(for: .milliseconds(25))
            } else {
                waits = 0
            }
        }
    }

    /// The account changed (perhaps a session ended): closes the socket if its session is gone.
    package func checkSession() {
        guard let id = state.withLockedValue({ $0.phase == .live ? $0.sessionID : nil }) else { return }
        run {
            if try await !self.hub.bearer.sessions.isLive(sessionID: id) {
                self.close(V1.Realtime.CloseCode.sessionEnded, "session ended")
            }
        }
    }

    private func close(_ code: UInt16, _ reason: String) {
        let connection = state.withLockedValue { state -> WebSocketConnection? in
            if state.phase == .awaitingAuth { state.phase = .closed }
            return state.connection
        }
        connection?.close(code: .unknown(code), reason: reason)
    }

    /// Work outside the connection's own tasks, counted so shutdown waits for it.
    private func run(_ work: @escaping @Sendable () async throws -> Void) {
        guard let connection = state.withLockedValue({ $0.connection }) else { return }
        let inFlight = connection.endpoint.work
        inFlight.begin()
        Task {
            defer { inFlight.end() }
            do {
                try await work()
            } catch {
                self.hub.logger.warning("realtime: catching up failed", metadata: ["error": "\(String(reflecting: error))"])
                self.state.withLockedValue { $0.pumping = false }
            }
        }
    }

    package static func text(_ frame: RealtimeFrame) -> String {
        String(decoding: (try? V1.encoder.encode(frame)) ?? Data(), as: UTF8.self)
    }
}
