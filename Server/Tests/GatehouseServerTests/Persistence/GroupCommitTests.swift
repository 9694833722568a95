import Foundation
import GatehouseFoundation
import GatehouseServer
import NIOConcurrencyHelpers
import Testing

private struct Refused: Error {}

@Suite("Group commit")
struct GroupCommitTests {
    /// What the test's writer saw and did.
    final class Log: Sendable {
        let batches = NIOLockedValueBox<[[Int]]>([])
        let alone = NIOLockedValueBox<[Int]>([])
    }

    @Test("requests sent at once share batches of at most maxBatch; each gets its own outcome; those left alone, and every request of a failed batch, are written on their own")
    func batchesAndFallback() async throws {
        let log = Log()
        // Multiples of 7 fail, other even numbers are answered by the batch, other odd ones left alone; a batch holding 50 fails as a whole.
        let commits = GroupCommit<Int, String>(maxBatch: 4, concurrency: 2, database: nil, write: { requests in
            log.batches.withLockedValue { $0.append(requests) }
            try await Task.sleep(for: .milliseconds(5))
            if requests.contains(50) { throw CancellationError() }
            return requests.map { n in
                if n % 7 == 0 { return .done(.failure(Refused())) }
                return n % 2 == 0 ? .done(.success("batch \(n)")) : .alone
            }
        }, single: { n in
            log.alone.withLockedValue { $0.append(n) }
            return "alone \(n)"
        })

        let answers = await withTaskGroup(of: (Int, String).self) { group in
            for n in 1...60 {
                group.addTask { (n, (try? await commits.submit(n)) ?? "failed") }
            }
            return await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }

        let batches: [[Int]] = log.batches.withLockedValue { $0 }
        let sizes: [Int] = batches.map(\.count)
        #expect(sizes.allSatisfy { $0 >= 1 && $0 <= 4 })
        #expect(sizes.count < 60, "requests sent at once shared batches: \(sizes.count) batches")
        let all: [Int] = batches.flatMap { $0 }.sorted()
        #expect(all == Array(1...60), "each request went into exactly one batch")
        let failedBatch = Set(try #require(batches.first { $0.contains(50) }))
        let leftAlone: Set<Int> = Set((1...60).filter { n in failedBatch.contains(n) || (n % 2 == 1 && n % 7 != 0) })
        for n in 1...60 {
            let expected: String
            if leftAlone.contains(n) { expected = "alone \(n)" } else if n % 7 == 0 { expected = "failed" } else { expected = "batch \(n)" }
            #expect(answers[n] == expected, "request \(n)")
        }
        let written: Set<Int> = Set(log.alone.withLockedValue { $0 })
        #expect(written == leftAlone)
    }
}
