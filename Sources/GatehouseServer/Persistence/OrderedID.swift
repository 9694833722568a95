import Foundation
import NIOConcurrencyHelpers

/// Time-ordered UUIDs (version 7: 48-bit Unix milliseconds, then a 12-bit in-process counter,
/// then random bits). Both engines compare UUIDs byte by byte, so ordering by id is insertion
/// order, also when the injected clock stands still.
enum OrderedID {
    private static let state = NIOLockedValueBox((lastMillis: UInt64(0), counter: UInt16(0)))

    static func make() -> UUID {
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
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<6 { bytes[i] = UInt8((millis >> (8 * (5 - UInt64(i)))) & 0xFF) }
        bytes[6] = 0x70 | UInt8((counter >> 8) & 0x0F)
        bytes[7] = UInt8(counter & 0xFF)
        for i in 8..<16 { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
