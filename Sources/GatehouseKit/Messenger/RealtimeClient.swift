import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the realtime socket tells an app.
public enum RealtimeUpdate: Sendable, Equatable {
    /// Connected and authenticated; `seq` is the account's newest event at that moment.
    case connected(seq: Int64)
    /// One event, in order: each `seq` is the previous one's plus 1.
    case event(RealtimeEvent)
    /// Events after the point the client asked for are gone: reload what is shown, then go on.
    case resync(seq: Int64)
    /// The connection dropped; the client reconnects by itself (after `retryIn`) and resumes.
    case disconnected(retryIn: Duration)
    /// The session is over (logged out, revoked, expired, or no session): the client stopped.
    case sessionEnded
}

/// The messenger's realtime socket (`/v1/realtime`, docs/messenger.md) for one session: it
/// authenticates with the session's token in the first frame (every platform's WebSocket can do
/// that), hands out the events in order, and on a dropped connection reconnects with jittered
/// backoff and `?since=` the last event it handed out, so nothing is lost or doubled. A gap it
/// sees (a `seq` ahead of the next) makes it reconnect from the last one too. A connection the
/// server closes before `ready` means the token is no longer good: it stops with ``RealtimeUpdate/sessionEnded``.
public final class RealtimeClient: Sendable {
    /// Delays between reconnections: each attempt waits the next (the last repeats), times a
    /// random factor in 0.5…1.5 so that a restarted server is not met by every client at once.
    public struct Backoff: Sendable {
        /// The waits in order; the last repeats.
        public var delays: [Duration]
        /// Backoff with these waits (by default 0.5, 1, 2, 5, 10 and 30 seconds).
        public init(delays: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30)]) {
            self.delays = delays
        }
    }

    /// The core whose session the socket authenticates with.
    public let core: GatehouseClient
    let transport: any WebSocketTransport
    let backoff: Backoff
    private let state: Locked<State>

    private struct State {
        var lastSeq: Int64?
        var task: Task<Void, Never>?
        var connection: (any WebSocketConnection)?
    }

    /// A realtime client with `core`'s session.
    ///
    /// - Parameters:
    ///   - since: the last event the app has already applied (from a previous run); nil starts from now.
    public init(core: GatehouseClient, transport: any WebSocketTransport = WebSocketTransports.default,
                since: Int64? = nil, backoff: Backoff = Backoff()) {
        self.core = core
        self.transport = transport
        self.backoff = backoff
        self.state = Locked(State(lastSeq: since))
    }

    /// The last event handed out (keep it to resume after a relaunch).
    public var lastSeq: Int64? { state.withLock { $0.lastSeq } }

    /// Connects and keeps connected until ``stop()`` or the session ends; the updates, in order.
    public func updates() -> AsyncStream<RealtimeUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: RealtimeUpdate.self, bufferingPolicy: .unbounded)
        let task = Task { [self] in
            await self.run(continuation)
            continuation.finish()
        }
        state.withLock { $0.task?.cancel(); $0.task = task }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Closes the socket and stops reconnecting.
    public func stop() async {
        let (task, connection) = state.withLock { state in
            defer { state.task = nil; state.connection = nil }
            return (state.task, state.connection)
        }
        task?.cancel()
        await connection?.close()
        _ = await task?.value
    }

    private func run(_ out: AsyncStream<RealtimeUpdate>.Continuation) async {
        var failures = 0
        while !Task.isCancelled {
            // A signed token is renewed first when it is about to expire: every connection shows a live one.
            guard let session = try? await core.freshSession() else {
                out.yield(.sessionEnded)
                return
            }
            var gotReady = false
            do {
                let connection = try await transport.connect(to: url())
                state.withLock { $0.connection = connection }
                try await connection.send(Self.text(.auth(token: session.token)))
                reading: while !Task.isCancelled, let text = try await connection.receive() {
                    guard let frame = try? V1.decoder.decode(RealtimeFrame.self, from: Data(text.utf8)) else {
                        // An event of a type this SDK does not know (a newer server): skipped, its number kept,
                        // so the next one is no gap.
                        if let unknown = try? JSONDecoder().decode(UnknownEvent.self, from: Data(text.utf8)) {
                            state.withLock { if let last = $0.lastSeq, unknown.seq == last + 1 { $0.lastSeq = unknown.seq } }
                        }
                        continue
                    }
                    switch frame {
                    case .ready(let seq):
                        gotReady = true
                        failures = 0
                        state.withLock { if $0.lastSeq == nil { $0.lastSeq = seq } }
                        out.yield(.connected(seq: seq))
                    case .resync(let seq):
                        state.withLock { $0.lastSeq = seq }
                        out.yield(.resync(seq: seq))
                    case .event(let event):
                        let last = state.withLock { $0.lastSeq } ?? (event.seq - 1)
                        if event.seq <= last { continue }  // already handed out
                        if event.seq > last + 1 { break reading }  // a gap: resume from the last one
                        state.withLock { $0.lastSeq = event.seq }
                        out.yield(.event(event))
                    case .auth, .error:
                        continue
                    }
                }
                await connection.close()
                state.withLock { $0.connection = nil }
            } catch {
                // A send or a read that failed: the connection is over, and closed here (not left open).
                let broken = state.withLock { state -> (any WebSocketConnection)? in
                    defer { state.connection = nil }
                    return state.connection
                }
                await broken?.close()
            }
            if Task.isCancelled { return }
            if !gotReady {
                // Closed before `ready`: a refused token, or a server that is away. Ask which.
                if await sessionIsOver() {
                    out.yield(.sessionEnded)
                    return
                }
            }
            let base = backoff.delays[min(failures, backoff.delays.count - 1)]
            let delay = base * Double.random(in: 0.5...1.5)
            failures += 1
            out.yield(.disconnected(retryIn: delay))
            try? await Task.sleep(for: delay)
        }
    }

    /// Asks the server whether the stored session still works (a 401 clears it).
    private func sessionIsOver() async -> Bool {
        do {
            _ = try await core.call(V1.Accounts.me)
            return false
        } catch GatehouseClientError.sessionExpired {
            return true
        } catch {
            return core.session == nil
        }
    }

    private func url() -> URL {
        var components = URLComponents(url: core.baseURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath = path + V1.Realtime.path
        components.percentEncodedQuery = state.withLock { $0.lastSeq }.map { "since=\($0)" }
        return components.url!
    }

    static func text(_ frame: RealtimeFrame) -> String {
        String(decoding: (try? V1.encoder.encode(frame)) ?? Data(), as: UTF8.self)
    }
}

/// What every event frame has: its number.
private struct UnknownEvent: Decodable {
    var seq: Int64
}
