import Foundation

/// The server's view of time. Live in production; tests inject a clock they move by hand,
/// so expiry is tested without sleeping.
public struct GatehouseClock: Sendable {
    public var now: @Sendable () -> Date
    public init(now: @escaping @Sendable () -> Date) { self.now = now }
    public static let live = GatehouseClock { Date() }
}

/// External effects injected into `buildApplication`. Tests replace the clock and the random source.
public struct GatehouseDependencies: Sendable {
    public var clock: GatehouseClock
    public var random: GatehouseRandom
    public init(clock: GatehouseClock = .live, random: GatehouseRandom = .live) {
        self.clock = clock
        self.random = random
    }
    public static let live = GatehouseDependencies()
}
