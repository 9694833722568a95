import HummingbirdBcrypt
import NIOPosix

/// bcrypt on a thread pool: a hash at cost 10 takes tens of milliseconds, which must never
/// block an event loop.
struct PasswordHasher: Sendable {
    let cost: UInt8
    let threadPool: NIOThreadPool

    /// A valid hash of a random string, verified against when an account does not exist so an
    /// unknown login costs the same time as a wrong password.
    let dummyHash: String

    init(cost: Int, threadPool: NIOThreadPool) {
        self.cost = UInt8(cost)
        self.threadPool = threadPool
        self.dummyHash = Bcrypt.hash(Secrets.token(), cost: UInt8(cost))
    }

    func hash(_ password: String) async throws -> String {
        let cost = self.cost
        return try await threadPool.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, hash: String) async throws -> Bool {
        try await threadPool.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
