import NIOCore
import NIOPosix

/// Threads for work that only computes (bcrypt, signature verification and enrolment), one per
/// core, for the life of the process. Not NIO's shared pool: SQLite runs its queries there, and
/// work queued in front of them makes every cheap request wait behind it (a queue of 50 ms
/// hashes made p99 0.9 s on SQLite during a login burst; signature enrolments and
/// verifications left a core idle at 8 authentications in flight).
package enum ComputeThreads {
    package static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: System.coreCount)
        pool.start()
        return pool
    }()
}
