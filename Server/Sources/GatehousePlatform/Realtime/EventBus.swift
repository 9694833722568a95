import FluentKit
import Foundation
import GatehouseFoundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import SQLKit

/// A small event between instances (DESIGN §2 "Multi-instance ready"): what happened and to whom,
/// never the data itself. A subscriber reads what it needs from the database, which stays the only
/// source of truth; an event only says when to look.
package struct BusEvent: Codable, Equatable, Sendable {
    package var topic: String
    package var account: UUID?
    /// Ids or counters; at most `EventBus.maxPayloadBytes` with the rest of the event.
    package var body: String

    package init(topic: String, account: UUID? = nil, body: String = "") {
        self.topic = topic
        self.account = account
        self.body = body
    }

    package enum CodingKeys: String, CodingKey {
        case topic = "t", account = "a", body = "b"
    }
}

package enum BusTopic {
    /// A listener's own notification, sent to itself through the database (`PostgresEventBus`).
    package static let heartbeat = "bus.heartbeat"
    /// An account or its sessions changed: every instance drops its cached copies.
    package static let accountChanged = "account.changed"
    /// A Sign To Login app changed (its key, its threshold, disabled): every instance drops its copies.
    package static let appChanged = "app.changed"
}

/// Publish/subscribe of `BusEvent`s. PostgreSQL: LISTEN/NOTIFY, one listening connection per
/// instance (`PostgresEventBus`); SQLite: one instance, in process (`InProcessEventBus`); or Redis's
/// publish/subscribe when `GATEHOUSE_EVENT_BUS` names a server (`RedisEventBus`).
/// Handlers run on the bus's thread and must not block: they flag work, hop, or drop a cache entry.
package protocol EventBus: Sendable {
    /// Publishes an event. With `db` a transaction, PostgreSQL delivers it when that transaction
    /// commits and never if it rolls back; without, at once.
    func publish(_ event: BusEvent, on db: (any GatehouseDatabase)?) async throws
    /// Publishes several events in order, as one write where the engine allows.
    func publish(_ events: [BusEvent], on db: (any GatehouseDatabase)?) async throws
    /// Calls `handler` for each event of `topic` (of `account`, or of every account when nil)
    /// until the subscription is cancelled.
    func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription
    /// Calls `handler` whenever events may have been missed (the listener reconnected), so
    /// whoever keeps copies can drop them all.
    func onGap(_ handler: @escaping @Sendable () -> Void)
    /// False while events from other instances may not arrive (the listener is down).
    var isConnected: Bool { get }
    /// An instant before which every event published anywhere (committed, with a transaction)
    /// has been dispatched here, or nil when the bus cannot say: what lets a cache keep a copy
    /// past its TTL while no event about it came (`SessionCache`). PostgreSQL's bus proves it
    /// with its own notifications coming back (`PostgresEventBus`); the others cannot: a command
    /// writes SQLite beside the in-process bus, and Redis's publishes leave after their commits
    /// and are dropped while Redis is away.
    var deliveredThrough: ContinuousClock.Instant? { get }
}

extension EventBus {
    package var deliveredThrough: ContinuousClock.Instant? { nil }

    package func publish(_ event: BusEvent) async throws { try await publish(event, on: nil) }

    /// Publishes several events, in order (PostgreSQL: in one statement).
    package func publish(_ events: [BusEvent], on db: (any GatehouseDatabase)?) async throws {
        for event in events { try await publish(event, on: db) }
    }
}

package enum EventBusError: Error, Equatable {
    case payloadTooLarge(Int)
}

/// Cancels its subscription when cancelled or released.
package final class BusSubscription: Sendable {
    private let cancellation: NIOLockedValueBox<(@Sendable () -> Void)?>

    package init(_ cancel: @escaping @Sendable () -> Void) { cancellation = NIOLockedValueBox(cancel) }

    package func cancel() {
        let cancel = cancellation.withLockedValue { value in
            defer { value = nil }
            return value
        }
        cancel?()
    }

    deinit { cancel() }
}

/// Who listens to what: the dispatch table both buses share.
package final class BusSubscribers: Sendable {
    private struct Key: Hashable {
        var topic: String
        var account: UUID?
    }

    private struct State {
        var next = 0
        var handlers: [Key: [Int: @Sendable (BusEvent) -> Void]] = [:]
        var gapHandlers: [@Sendable () -> Void] = []
    }

    private let state = NIOLockedValueBox(State())

    package func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription {
        let key = Key(topic: topic, account: account)
        let id = state.withLockedValue { state in
            state.next += 1
            state.handlers[key, default: [:]][state.next] = handler
            return state.next
        }
        return BusSubscription { [weak self] in
            self?.state.withLockedValue { state in
                state.handlers[key]?[id] = nil
                if state.handlers[key]?.isEmpty == true { state.handlers[key] = nil }
            }
        }
    }

    package func onGap(_ handler: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.gapHandlers.append(handler) }
    }

    /// Whether an event of this topic and account has a handler here (`dispatch` would run one).
    package func listens(topic: String, account: UUID?) -> Bool {
        state.withLockedValue { state in
            state.handlers[Key(topic: topic, account: nil)] != nil || account.map { state.handlers[Key(topic: topic, account: $0)] != nil } ?? false
        }
    }

    /// Runs the handlers of the event's topic: those of its account and those of every account.
    package func dispatch(_ event: BusEvent) {
        let handlers = state.withLockedValue { state in
            var found = Array((state.handlers[Key(topic: event.topic, account: nil)] ?? [:]).values)
            if let account = event.account {
                found += (state.handlers[Key(topic: event.topic, account: account)] ?? [:]).values
            }
            return found
        }
        for handler in handlers { handler(event) }
    }

    package func gap() {
        for handler in state.withLockedValue({ $0.gapHandlers }) { handler() }
    }
}

/// The SQLite engine's bus: one instance, so an event is delivered in process, at once.
package final class InProcessEventBus: EventBus {
    package init() {}

    package let subscribers = BusSubscribers()

    package func publish(_ event: BusEvent, on db: (any GatehouseDatabase)?) async throws {
        try EventBusLimits.check(event)
        subscribers.dispatch(event)
    }

    package func subscribe(topic: String, account: UUID?, _ handler: @escaping @Sendable (BusEvent) -> Void) -> BusSubscription {
        subscribers.subscribe(topic: topic, account: account, handler)
    }

    package func onGap(_ handler: @escaping @Sendable () -> Void) { subscribers.onGap(handler) }

    package var isConnected: Bool { true }
}

/// The listening loop both networked buses run: listen until the connection ends, then again
/// after a backoff (50 ms, growing to 5 s; back to the start once a listen succeeds), until the
/// server shuts down. `connected` is false between listens; `listenOnce` calls `onListening`
/// once it hears, and returns or throws when its connection ends; `interrupt` (on shutdown)
/// ends the current listen.
package enum BusListener {
    static let retryDelays: [Duration] = [.milliseconds(50), .milliseconds(200), .seconds(1), .seconds(2), .seconds(5)]

    package static func run(logger: Logger, connected: NIOLockedValueBox<Bool>,
                            beforeFirst: @Sendable (NIOLockedValueBox<Bool>) async -> Void = { _ in },
                            listenOnce: @Sendable (NIOLockedValueBox<Bool>, _ onListening: @Sendable () -> Void) async throws -> Void,
                            interrupt: @escaping @Sendable () -> Void) async {
        let stopping = NIOLockedValueBox(false)
        await withGracefulShutdownHandler {
            await beforeFirst(stopping)
            let failures = NIOLockedValueBox(0)
            while !stopping.withLockedValue({ $0 }) && !Task.isCancelled {
                do {
                    try await listenOnce(stopping) { failures.withLockedValue { $0 = 0 } }
                } catch {
                    if stopping.withLockedValue({ $0 }) || Task.isCancelled { break }
                    // Once per outage: a listener retrying every 5 s would fill the log otherwise.
                    if failures.withLockedValue({ $0 }) == 0 {
                        logger.warning("event bus: listener lost, reconnecting", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                connected.withLockedValue { $0 = false }
                if stopping.withLockedValue({ $0 }) || Task.isCancelled { break }
                let attempt = failures.withLockedValue { value in defer { value += 1 }; return value }
                let until = ContinuousClock.now + retryDelays[min(attempt, retryDelays.count - 1)]
                while ContinuousClock.now < until, !stopping.withLockedValue({ $0 }) { try? await Task.sleep(for: .milliseconds(50)) }
            }
            connected.withLockedValue { $0 = false }
        } onGracefulShutdown: {
            stopping.withLockedValue { $0 = true }
            interrupt()
        }
    }
}

/// Text with places for numbers that only the statement sending it will know: an event's `seq`,
/// when the statement that writes the event numbers it (`EventLog.inStatement`). Its pieces, and
/// after each piece but the last the place of a number (`holes`: an index whose meaning is the
/// caller's). Without places it is plain text (`pieces[0]`).
package struct NumberedText: Sendable, Equatable {
    package private(set) var pieces: [String]
    package private(set) var holes: [Int] = []
    /// A number's widest text (an `Int64` with its sign): lengths reckon every place at it.
    package static let widestNumber = 20

    package init(_ text: String = "") {
        pieces = [text]
    }

    package mutating func append(_ text: String) {
        pieces[pieces.count - 1] += text
    }

    /// The place of number `hole`.
    package mutating func append(number hole: Int) {
        holes.append(hole)
        pieces.append("")
    }

    package mutating func append(_ other: NumberedText) {
        append(other.pieces[0])
        for (index, hole) in other.holes.enumerated() {
            append(number: hole)
            append(other.pieces[index + 1])
        }
    }

    /// Its length in UTF-8 with every number at its widest.
    package var widestCount: Int {
        pieces.reduce(0) { $0 + $1.utf8.count } + holes.count * Self.widestNumber
    }

    /// Each piece escaped for the inside of a JSON string (`JSONString.escape`, which goes
    /// character by character: the text escaped is this escaped, filled).
    package func escaped() -> NumberedText {
        var copy = self
        copy.pieces = pieces.map(JSONString.escape)
        return copy
    }
}

package enum EventBusLimits {
    /// PostgreSQL's NOTIFY payload limit (less than 8,000 bytes); larger data goes by id.
    package static let maxPayloadBytes = 7_999

    /// The event as JSON (`BusEvent.CodingKeys`), written by hand: a batch of payments announces
    /// hundreds, and JSONEncoder was a tenth of the server's time then.
    package static func encode(_ event: BusEvent) throws -> String {
        let payload = encode(topic: event.topic, account: event.account, body: NumberedText(event.body)).pieces[0]
        guard payload.utf8.count <= maxPayloadBytes else { throw EventBusError.payloadTooLarge(payload.utf8.count) }
        return payload
    }

    /// `encode` of an event whose body has places for numbers (`NumberedText`): the same text once
    /// they are filled in, since escaping goes character by character and a number needs none.
    package static func encode(topic: String, account: UUID?, body: NumberedText) -> NumberedText {
        var payload = NumberedText(#"{"t":"# + JSONString.quoted(topic))
        if let account { payload.append(#","a":"# + JSONString.quoted(account.uuidString)) }
        payload.append(#","b":""#)
        payload.append(body.escaped())
        payload.append(#""}"#)
        return payload
    }

    package static func check(_ event: BusEvent) throws { _ = try encode(event) }

    /// Events as notification payloads, in order: as many as fit in the limit in one JSON array,
    /// an event alone as itself (an event too large alone throws, as `encode` does).
    package static func pack(_ events: [BusEvent]) throws -> [String] {
        try pack(events.map { try NumberedText(encode($0)) }).map { $0.pieces[0] }
    }

    /// `pack` for payloads with places for numbers, each place reckoned at a number's widest
    /// (`NumberedText.widestNumber`), so that what the statement fills in still fits.
    package static func pack(_ payloads: [NumberedText]) throws -> [NumberedText] {
        var packed: [NumberedText] = []
        var group: [NumberedText] = []
        var size = 1
        func flush() {
            if group.count == 1 {
                packed.append(group[0])
            } else if !group.isEmpty {
                var array = NumberedText("[")
                for (index, one) in group.enumerated() {
                    if index > 0 { array.append(",") }
                    array.append(one)
                }
                array.append("]")
                packed.append(array)
            }
            group = []
            size = 1
        }
        for one in payloads {
            let count = one.widestCount
            guard count <= maxPayloadBytes else { throw EventBusError.payloadTooLarge(count) }
            // `size` is the array's length so far, brackets included; one more adds a comma.
            if !group.isEmpty, size + count + 1 > maxPayloadBytes { flush() }
            group.append(one)
            size += count + 1
        }
        flush()
        return packed
    }

    /// The events of a payload: an array (`pack`) or one event (instances of an older version).
    /// What `encode` writes is read by `OwnPayload` (every instance reads every notification, so
    /// the JSON decoder was a twentieth of a busy server's time); anything else by the decoder.
    /// Only the events `wanted` says someone here listens to (`BusSubscribers.listens`) are kept;
    /// the others' bodies, most of a payload, are stepped over unread.
    package static func unpack(_ payload: String, wanted: (_ topic: String, _ account: UUID?) -> Bool = { _, _ in true }) -> [BusEvent]? {
        if let events = OwnPayload.read(payload, wanted: wanted) { return events }
        let data = Data(payload.utf8)
        let events = payload.hasPrefix("[") ? try? JSONDecoder().decode([BusEvent].self, from: data)
                                            : (try? JSONDecoder().decode(BusEvent.self, from: data)).map { [$0] }
        return events?.filter { wanted($0.topic, $0.account) }
    }
}

/// Reads exactly what `EventBusLimits.encode` and `pack` write: `{"t":…,"a":…,"b":…}` (no
/// `"a"` without an account), alone or as an array joined by commas, the strings escaped by
/// `JSONString.escape`. Anything else answers nil, and the JSON decoder reads it.
private struct OwnPayload {
    private let bytes: [UInt8]
    private var index = 0

    static func read(_ payload: String, wanted: (String, UUID?) -> Bool) -> [BusEvent]? {
        var reader = OwnPayload(bytes: Array(payload.utf8))
        return reader.payload(wanted: wanted)
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func payload(wanted: (String, UUID?) -> Bool) -> [BusEvent]? {
        var events: [BusEvent] = []
        if take("[") {
            repeat {
                guard let event = event(wanted: wanted) else { return nil }
                if let event { events.append(event) }
            } while take(",")
            guard take("]") else { return nil }
        } else {
            guard let event = event(wanted: wanted) else { return nil }
            if let event { events.append(event) }
        }
        return index == bytes.count ? events : nil
    }

    /// An event; `.some(nil)` for one nobody here wants (its body stepped over); nil when unreadable.
    private mutating func event(wanted: (String, UUID?) -> Bool) -> BusEvent?? {
        guard take(#"{"t":"#), let topic = string() else { return nil }
        var account: UUID?
        if take(#","a":"#) {
            guard let text = string(), let id = UUID(uuidString: text) else { return nil }
            account = id
        }
        guard take(#","b":"#) else { return nil }
        guard wanted(topic, account) else {
            guard skipString(), take("}") else { return nil }
            return .some(nil)
        }
        guard let body = string(), take("}") else { return nil }
        return BusEvent(topic: topic, account: account, body: body)
    }

    /// Steps over a string literal as `string()` reads it, keeping nothing.
    private mutating func skipString() -> Bool {
        guard take("\"") else { return false }
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"):
                // An escape is two bytes, `\u00XX` six.
                guard index + 1 < bytes.count else { return false }
                index += bytes[index + 1] == UInt8(ascii: "u") ? 6 : 2
            case 0..<0x20: return false
            default: index += 1
            }
        }
        return false
    }

    /// A string literal with the escapes `JSONString.escape` writes. The bytes between escapes
    /// are copied a run at a time (a body is mostly such runs).
    private mutating func string() -> String? {
        guard take("\"") else { return nil }
        var out: [UInt8] = []
        var run = index  // the first byte not copied yet
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                defer { index += 1 }
                if out.isEmpty { return String(decoding: bytes[run..<index], as: UTF8.self) }
                out.append(contentsOf: bytes[run..<index])
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                out.append(contentsOf: bytes[run..<index])
                index += 1
                guard index < bytes.count else { return nil }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
                case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
                case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    // Only what escape writes: \u00XX, a control character or DEL.
                    guard index + 4 <= bytes.count, bytes[index] == UInt8(ascii: "0"), bytes[index + 1] == UInt8(ascii: "0"),
                          let high = Self.hex(bytes[index + 2]), let low = Self.hex(bytes[index + 3]) else { return nil }
                    let value = high << 4 | low
                    guard value < 0x20 || value == 0x7F else { return nil }
                    out.append(value)
                    index += 4
                default: return nil
                }
                run = index
            case 0..<0x20: return nil
            default: index += 1
            }
        }
        return nil
    }

    private mutating func take(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = literal.withUTF8Buffer { expected in expected.elementsEqual(bytes[index..<(index + count)]) }
        if matches { index += count }
        return matches
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
