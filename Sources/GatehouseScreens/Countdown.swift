import Foundation

/// The arithmetic behind every countdown the screens show (the phone-accounts code screen's
/// resend countdown; the messenger code step's expiry and resend countdowns).
enum Countdown {
    /// Whole seconds from `now` until `date`, rounded up; 0 once it has passed.
    static func secondsLeft(until date: Date, now: Date) -> Int {
        max(0, Int(date.timeIntervalSince(now).rounded(.up)))
    }

    /// `m:ss`.
    static func clock(_ seconds: Int) -> String { String(format: "%d:%02d", seconds / 60, seconds % 60) }
}

/// Calls a closure on the main actor once a second, until it returns false, ``stop()`` is
/// called or the ticker goes away: what drives a countdown while its screen is shown.
@MainActor
final class SecondTicker {
    private var task: Task<Void, Never>?

    init() {}

    deinit { task?.cancel() }

    /// Starts ticking (again, if it was): `tick` is called after each second and returns
    /// whether to go on.
    func start(_ tick: @escaping @MainActor () -> Bool) {
        task?.cancel()
        task = Task { @MainActor in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: 1_000_000_000)
                if Task.isCancelled || !tick() { return }
            }
        }
    }

    /// Stops ticking.
    func stop() {
        task?.cancel()
        task = nil
    }
}
