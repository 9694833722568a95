#if os(Linux)
import Glibc
#endif
import HummingbirdBcrypt
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// bcrypt on a thread pool: a hash at cost 10 takes tens of milliseconds, which must never
/// block an event loop.
package struct PasswordHasher: Sendable {
    /// bcrypt's threads: `ComputeThreads.pool`.
    package static var sharedThreadPool: NIOThreadPool { ComputeThreads.pool }

    package let cost: UInt8
    package let threadPool: NIOThreadPool

    /// A valid hash of a random string, verified against when an account does not exist so an
    /// unknown login costs the same time as a wrong password.
    package let dummyHash: String

    /// How many bcrypt verifications ran: what a failed login costs, counted rather than timed
    /// (docs/security.md, "Timing").
    package let verifications = Counter()

    package final class Counter: Sendable {
        private let value = NIOLockedValueBox(0)
        package func increment() { value.withLockedValue { $0 += 1 } }
        package var count: Int { value.withLockedValue { $0 } }
    }

    /// The hash of an account that has no password (an import without one, an erased account): nothing verifies
    /// against it.
    package static let unusable = "!"

    package init(cost: Int, threadPool: NIOThreadPool) {
        self.cost = UInt8(cost)
        self.threadPool = threadPool
        self.dummyHash = Bcrypt.hash(Secrets.systemToken(), cost: UInt8(cost))
    }

    package func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await threadPool.runIfActive {
            Self.yieldToRequests()
            return Bcrypt.hash(password, cost: cost)
        }
    }

    /// The C bcrypt reads a NUL-terminated string and at most 72 bytes of it, so "secret\0x" and
    /// a 72-byte password followed by anything would both verify against the hash of their
    /// prefix. Such a candidate never matches; it still costs one bcrypt, so the answer takes the
    /// same time. (Stored passwords are at most 72 bytes: `PasswordRule.maxBytes`.)
    package func verify(_ password: String, hash: String) async throws -> Bool {
        let verifiable = !password.utf8.contains(0) && password.utf8.count <= 72
        let candidate = verifiable ? password : ""
        verifications.increment()
        // A hash another system made (`ForeignPasswordHash`): verified by its own algorithm, on the same threads.
        let foreign = ForeignPasswordHash.isNative(hash) ? nil : try? ForeignPasswordHash(hash)
        let dummy = dummyHash
        let matched = try await threadPool.runIfActive {
            Self.yieldToRequests()
            switch foreign {
            case .bcrypt(let normalized): return Bcrypt.verify(candidate, hash: normalized)
            case let foreign?: return foreign.verify(candidate)
            case nil where ForeignPasswordHash.isNative(hash): return Bcrypt.verify(candidate, hash: hash)
            case nil:
                // No password (`unusable`, an erased account): as slow a no as a wrong password's.
                _ = Bcrypt.verify(candidate, hash: dummy)
                return false
            }
        }
        return verifiable && matched
    }

    /// Lowers the calling thread's priority (nice 10), so that when logins keep every core busy
    /// the event loops still get the CPU at once and cheap requests stay fast; hashing takes
    /// what is left. Idempotent and cheap next to a hash.
    private static func yieldToRequests() {
        #if os(Linux)
        // On Linux, nice is per thread and "0" is the calling thread (setpriority(2), BUGS).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }
}
