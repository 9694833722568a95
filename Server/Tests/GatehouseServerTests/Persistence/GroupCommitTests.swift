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

    @Test("a writer takes, from the queue's head, the requests that touch nothing being written nor anything a request left before them touches, at most maxBatch")
    func disjointSelection() {
        // 1 is being written: the first request waits, and so does every later one that touches 1 or 2 (the first's),
        // or 3 (the second's, which waits because of 2).
        let queue: [[Int]] = [[1, 2], [2, 3], [4, 5], [5, 6], [3, 7], [8, 9], [2], [10]]
        let busy: Set<Int> = [1]
        #expect(GroupCommit<Int, Int>.disjoint(queue, busy: busy.contains, maxBatch: 64) == [2, 3, 5, 7])
        #expect(GroupCommit<Int, Int>.disjoint(queue, busy: busy.contains, maxBatch: 2) == [2, 3])
        #expect(GroupCommit<Int, Int>.disjoint(queue, busy: { _ in false }, maxBatch: 64) == Array(0..<8), "nothing busy: the whole queue, in order")
        #expect(GroupCommit<Int, Int>.disjoint(queue, busy: { _ in true }, maxBatch: 64) == [], "everything busy: nothing")
    }

    @Test("with touches, batches written at once never touch the same thing, several are written at once, and every request is answered once")
    func disjointBatches() async throws {
        let writing = NIOLockedValueBox<[Int: Int]>([:])
        let overlaps = NIOLockedValueBox<[[Int]]>([])
        let atOnce = NIOLockedValueBox((now: 0, most: 0))
        let log = Log()
        func commits(touches: (@Sendable (Int) -> [Int])?) -> GroupCommit<Int, String> {
            GroupCommit<Int, String>(maxBatch: 6, concurrency: 3, database: nil, touches: touches, write: { requests in
                let keys = Set(requests.map { $0 % 10 })
                writing.withLockedValue { writing in
                    if keys.contains(where: { writing[$0] != nil }) { overlaps.withLockedValue { $0.append(requests) } }
                    for key in keys { writing[key, default: 0] += 1 }
                }
                atOnce.withLockedValue { $0.now += 1; $0.most = max($0.most, $0.now) }
                log.batches.withLockedValue { $0.append(requests) }
                try await Task.sleep(for: .milliseconds(3))
                atOnce.withLockedValue { $0.now -= 1 }
                writing.withLockedValue { writing in
                    for key in keys { writing[key] = writing[key]! > 1 ? writing[key]! - 1 : nil }
                }
                return requests.map { .done(.success("written \($0)")) }
            }, single: { n in "alone \(n)" })
        }
        func run(_ commits: GroupCommit<Int, String>) async -> [Int: String] {
            await withTaskGroup(of: (Int, String).self) { group in
                for n in 1...300 {
                    group.addTask { (n, (try? await commits.submit(n)) ?? "failed") }
                }
                return await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
        }

        // Ten things, each request touching one.
        let answers = await run(commits(touches: { [$0 % 10] }))
        #expect(answers.count == 300 && answers.allSatisfy { $0.value == "written \($0.key)" })
        #expect(log.batches.withLockedValue { $0.flatMap { $0 }.sorted() } == Array(1...300), "each request in exactly one batch")
        #expect(overlaps.withLockedValue { $0 }.isEmpty, "batches written at once touched the same thing: \(overlaps.withLockedValue { $0 })")
        #expect(atOnce.withLockedValue { $0.most } >= 2, "several batches were written at once")

        // The same load without touches: batches written at once do share things (what the check above would catch).
        log.batches.withLockedValue { $0 = [] }
        _ = await run(commits(touches: nil))
        #expect(!overlaps.withLockedValue { $0 }.isEmpty)
    }

    @Test("a writer beyond the first starts only while backlog requests wait, and stops when fewer do")
    func secondWriterOnBacklog() async throws {
        // Each batch waits until the test lets it finish, so what starts when is decided by the queue alone.
        let gate = NIOLockedValueBox<(started: [[Int]], held: [CheckedContinuation<Void, Never>])>(([], []))
        let commits = GroupCommit<Int, String>(maxBatch: 64, concurrency: 2, backlog: 8, database: nil, write: { requests in
            await withCheckedContinuation { continuation in
                gate.withLockedValue { $0.started.append(requests); $0.held.append(continuation) }
            }
            return requests.map { .done(.success("written \($0)")) }
        }, single: { n in "alone \(n)" })
        func started() -> [[Int]] { gate.withLockedValue { $0.started } }
        func finishOldest() { gate.withLockedValue { $0.held.removeFirst() }.resume() }
        func until(_ condition: () -> Bool) async throws {
            var tries = 0
            while !condition(), tries < 2_000 {
                tries += 1
                try await Task.sleep(for: .milliseconds(2))
            }
            try #require(condition())
        }
        var answers: [Task<String, any Error>] = []
        func submit(_ numbers: ClosedRange<Int>) { for n in numbers { answers.append(Task { try await commits.submit(n) }) } }

        submit(1...1)
        try await until { started().count == 1 }
        submit(2...8)
        try await until { commits.queued == 7 }
        #expect(started().count == 1, "seven waiting, fewer than the backlog: the one writer takes them next")
        submit(9...9)
        try await until { started().count == 2 }
        #expect(started()[1].sorted() == Array(2...9), "the eighth waiting started a second writer, which took all eight")

        finishOldest()
        #expect(try await answers[0].value == "written 1")
        submit(10...12)
        try await until { commits.queued == 3 }
        #expect(started().count == 2, "after its batch, the first writer stopped with fewer than the backlog waiting")
        finishOldest()
        try await until { started().count == 3 }
        #expect(started()[2].sorted() == [10, 11, 12])
        finishOldest()
        for (index, answer) in answers.enumerated() { #expect(try await answer.value == "written \(index + 1)") }
    }

    @Test("the one writer lingers only when a linger at the recent pace would at least double its batch, and no longer than that pace fills it")
    func lingerRule() {
        let ms: UInt64 = 1_000_000
        func wait(_ queued: Int, gap: UInt64, linger: UInt64 = 5 * ms, maxBatch: Int = 128) -> UInt64 {
            GroupCommit<Int, Int>.lingerWait(queued: queued, gap: gap, linger: linger, maxBatch: maxBatch)
        }
        #expect(wait(1, gap: 1 * ms) == 5 * ms, "one every millisecond: five more in 5 ms")
        #expect(wait(4, gap: 1 * ms) == 5 * ms)
        #expect(wait(5, gap: 1 * ms) == 0, "five waiting: a linger would bring five, no more")
        #expect(wait(1, gap: 10 * ms) == 0, "one every 10 ms: the linger would most likely bring nothing")
        #expect(wait(0, gap: 1 * ms) == 0, "nothing waiting")
        #expect(wait(128, gap: 1) == 0, "a full batch never waits")
        #expect(wait(1, gap: 1, linger: 0) == 0, "no linger configured")
        #expect(wait(3, gap: .max) == 0, "no overflow")
        #expect(wait(8, gap: 10_000) == 1_200_000, "one every 10 µs: the 120 the batch has room for come in 1.2 ms, no need to wait 5")
        #expect(wait(2, gap: 1 * ms, maxBatch: 4) == 2 * ms, "room for two more")
    }

    @Test("with a linger, a request after a quiet or a pause is written at once, and a steady stream is written in fewer, larger batches than without")
    func lingerBatches() async throws {
        func run(linger: Duration) async throws -> (batches: [[Int]], lingers: Int, lone: Int) {
            let log = Log()
            let commits = GroupCommit<Int, String>(maxBatch: 64, linger: linger, database: nil, write: { requests in
                log.batches.withLockedValue { $0.append(requests) }
                return requests.map { .done(.success("written \($0)")) }
            }, single: { n in "alone \(n)" })
            // A request after a long quiet: nothing to wait for.
            #expect(try await commits.submit(0) == "written 0")
            let lone = commits.lingers
            // Then one about every millisecond, each waiting for its answer on its own task.
            var answers: [Task<String, any Error>] = []
            for n in 1...150 {
                answers.append(Task { try await commits.submit(n) })
                try await Task.sleep(for: .milliseconds(1))
            }
            for (index, answer) in answers.enumerated() { #expect(try await answer.value == "written \(index + 1)") }
            // A pause longer than the linger after the stream: its average of a millisecond or so would still say
            // wait, but a pause counts at once, and the request after it is written at once.
            let beforePause = commits.lingers
            try await Task.sleep(for: .milliseconds(60))
            #expect(try await commits.submit(151) == "written 151")
            #expect(commits.lingers == beforePause, "the request after a pause did not wait")
            let batches = log.batches.withLockedValue { $0 }
            #expect(batches.flatMap { $0 }.sorted() == Array(0...151), "every request in exactly one batch")
            return (batches, commits.lingers, lone)
        }
        let eager = try await run(linger: .zero)
        let lingering = try await run(linger: .milliseconds(25))
        #expect(eager.lingers == 0 && eager.lone == 0)
        #expect(lingering.lone == 0, "the first request, after a quiet, did not wait")
        #expect(lingering.lingers > 0)
        #expect(lingering.batches.count * 2 < eager.batches.count,
                "lingering: \(lingering.batches.count) batches; at once: \(eager.batches.count)")
    }
}
