import Foundation
import NIOConcurrencyHelpers

/// Time-ordered UUIDs (version 7: 48-bit Unix milliseconds, then a 12-bit in-process counter,
/// then random bits). Both engines compare UUIDs byte by byte, so ordering by id is insertion
/// order, also when the injected clock stands still.
package enum OrderedID {
    private static let state = NIOLockedValueBox((lastMillis: UInt64(0), counter: UInt16(0)))

    package static func make() -> UUID {
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let (millis, counter) = state.withLockedValue { s -> (UInt64, UInt16) in
            if now > s.lastMillis {
                s.lastMillis = now
                s.counter = 0
            } else {
                // Same (or earlier) millisecond: keep counting; roll into the next millisecond.
                s.counter &+= 1
                if s.counter > 0x0FFF {
                    s.lastMillis += 1
                    s.counter = 0
                }
            }
            return (s.lastMillis, s.counter)
        }
        // One draw of the system generator for the 8 random bytes (a system call each: one, not eight).
        var generator = SystemRandomNumberGenerator()
        let random = generator.next()
        func byte(_ value: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: value >> (8 * index)) }
        return UUID(uuid: (byte(millis, 5), byte(millis, 4), byte(millis, 3), byte(millis, 2), byte(millis, 1), byte(millis, 0),
                           0x70 | UInt8((counter >> 8) & 0x0F), UInt8(counter & 0xFF),
                           (byte(random, 0) & 0x3F) | 0x80, byte(random, 1), byte(random, 2), byte(random, 3),
                           byte(random, 4), byte(random, 5), byte(random, 6), byte(random, 7)))
    }
}
