import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Money requests at the wire level (docs/wallet.md, "Requests"): every state and every
/// transition, who may take it, and what a wrong one answers, on every engine.
@Suite("Wallet: money requests")
struct MoneyRequestsTests {
    typealias W = V1.Wallet

    @Test("an invoice: asked, refused for want of money (still open), paid once; then nothing else moves it", .tags(.engine), arguments: TestEngine.all)
    func invoice_isPaidOnce(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            let cat = try await app.v1.walletHolder("cat", phone: "+79160000003")

            // MUT: ann asks bob for 25 roubles
            let asked = try await app.v1.ask(25_00, from: bob, by: ann, comment: "обед")
            #expect(asked.state == .open && asked.kind == .invoice && asked.requester.id == ann.id && asked.payer.id == bob.id && asked.comment == "обед")
            #expect(asked.expiresAt.timeIntervalSince(asked.createdAt) == app.configuration.wallet.requestTTL)
            // bob sees it incoming, ann outgoing, cat not at all
            let incoming = try await app.v1.get(W.requests.path + "?direction=incoming", token: bob.token).decoded(as: MoneyRequestPage.self)
            #expect(incoming.items.map(\.id) == [asked.id])
            #expect(try await app.v1.get(W.requests.path + "?direction=incoming", token: ann.token).decoded(as: MoneyRequestPage.self).items.isEmpty)
            #expect(try await app.v1.get(W.requests.path + "?direction=outgoing&state=open&with=\(bob.id)", token: ann.token)
                .decoded(as: MoneyRequestPage.self).items.map(\.id) == [asked.id])
            try expectProblem(try await app.v1.get(app.v1.path(W.request, asked.id), token: cat.token), .notFound, .moneyRequestNotFound)
            try expectProblem(try await app.v1.act(W.confirm, on: asked.id, by: cat), .notFound, .moneyRequestNotFound)
            // the wrong side cannot pay or decline it; the payer cannot cancel it: not a transition the table lists, so 409
            try expectProblem(try await app.v1.act(W.confirm, on: asked.id, by: ann), .conflict, .invalidRequestState)
            try expectProblem(try await app.v1.act(W.decline, on: asked.id, by: ann), .conflict, .invalidRequestState)
            try expectProblem(try await app.v1.act(W.cancel, on: asked.id, by: bob), .conflict, .invalidRequestState)
            try expectProblem(try await app.v1.post(app.v1.path(W.confirm, asked.id), json: "", token: bob.token), .badRequest, .idempotencyKeyRequired)
            // bob has no money: refused, and the request stays open
            try expectProblem(try await app.v1.act(W.confirm, on: asked.id, by: bob), .unprocessableContent, .insufficientFunds)
            #expect(try await app.v1.get(app.v1.path(W.request, asked.id), token: bob.token).decoded(as: MoneyRequest.self).state == .open)
            try await app.credit("+79160000002", 100_00)
            let paid = try await app.v1.act(W.confirm, on: asked.id, by: bob, key: "pay-lunch")
            let replay = try await app.v1.act(W.confirm, on: asked.id, by: bob, key: "pay-lunch")

            // validate
            #expect(paid.status == .ok, "\(paid.text)")
            let payment = try paid.decoded(as: RequestPayment.self)
            #expect(payment.request.state == .paid && payment.request.paymentId == payment.transfer.id)
            #expect(payment.transfer.kind == .requestPayment && payment.transfer.from?.id == bob.id && payment.transfer.to.id == ann.id && payment.transfer.requestId == asked.id)
            #expect(payment.balance == 75_00)
            #expect(replay.status == .ok && replay.text == paid.text && replay.headers[HTTPField.Name(W.replayedHeader)!] == "true")
            #expect(try await app.v1.balance(of: ann) == 25_00)
            #expect(try await app.v1.balance(of: bob) == 75_00)
            // paid is final for an invoice
            let moves: [(any EndpointDeclaration, Someone)] = [(W.confirm, bob), (W.decline, bob), (W.cancel, ann)]
            for (endpoint, who) in moves {
                let problem = try expectProblem(try await app.v1.act(endpoint, on: asked.id, by: who), .conflict, .invalidRequestState)
                #expect(problem.detail.contains("paid"))
            }
            try expectProblem(try await app.v1.act(W.repay, on: asked.id, by: ann), .conflict, .invalidRequestState)
            // the chat shows the request and its payment, each by its author
            let chat = try #require(try await app.v1.chats(of: ann).items.first)
            let notes = try await app.v1.history(chat.id, for: ann).items.compactMap { message in message.payment.map { (message.authorId, $0.kind, $0.requestId) } }
            #expect(notes.map(\.0) == [ann.id, bob.id] && notes.map(\.1) == [.request, .requestPaid] && notes.allSatisfy { $0.2 == asked.id })
            // the events
            let anns = try await app.services.realtime.log.events(of: ann.id, after: 0, limit: 100).map(\.kind)
            #expect(anns.filter { $0.hasPrefix("wallet.") } == ["wallet.request.created", "wallet.transfer", "wallet.request.updated"])
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
        }
    }

    @Test("a loan: lent on confirm, repaid in one action by the borrower, once", .tags(.engine), arguments: TestEngine.all)
    func loan_isRepaidOnce(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.credit("+79160000002", 1_000_00)
            let loan = try await app.v1.ask(300_00, from: bob, by: ann, kind: .loan, comment: "до пятницы")

            // MUT
            try expectProblem(try await app.v1.act(W.repay, on: loan.id, by: ann), .conflict, .invalidRequestState)
            #expect(try await app.v1.act(W.confirm, on: loan.id, by: bob).status == .ok)
            try expectProblem(try await app.v1.act(W.repay, on: loan.id, by: bob), .conflict, .invalidRequestState)
            let repaid = try await app.v1.act(W.repay, on: loan.id, by: ann)
            let twice = try await app.v1.act(W.repay, on: loan.id, by: ann)

            // validate
            #expect(repaid.status == .ok, "\(repaid.text)")
            let payment = try repaid.decoded(as: RequestPayment.self)
            #expect(payment.request.state == .repaid && payment.request.repaymentId == payment.transfer.id && payment.request.paymentId != nil)
            #expect(payment.transfer.kind == .repayment && payment.transfer.from?.id == ann.id && payment.transfer.to.id == bob.id && payment.balance == 0)
            try expectProblem(twice, .conflict, .invalidRequestState)
            #expect(try await app.v1.balance(of: ann) == 0)
            #expect(try await app.v1.balance(of: bob) == 1_000_00)
            let history = try await app.v1.get(W.transactions.path, token: ann.token).decoded(as: WalletTransactionPage.self)
            #expect(history.items.map(\.kind) == [.repayment, .requestPayment] && history.items.allSatisfy { $0.requestId == loan.id })
            #expect(try await app.v1.get(W.requests.path + "?state=repaid", token: bob.token).decoded(as: MoneyRequestPage.self).items.map(\.id) == [loan.id])
        }
    }

    @Test("declined, cancelled and expired requests take no further move", .tags(.engine), arguments: TestEngine.all)
    func closedRequests_areFinal(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.wallet.requestTTL = 3_600 }) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.credit("+79160000002", 100_00)
            let declined = try await app.v1.ask(1_00, from: bob, by: ann)
            let cancelled = try await app.v1.ask(2_00, from: bob, by: ann)
            let expiring = try await app.v1.ask(3_00, from: bob, by: ann)

            // MUT
            let decline = try await app.v1.act(W.decline, on: declined.id, by: bob)
            let cancel = try await app.v1.act(W.cancel, on: cancelled.id, by: ann)
            app.clock.advance(by: 3_601)

            // validate
            #expect(try decline.decoded(as: MoneyRequest.self).state == .declined)
            #expect(try cancel.decoded(as: MoneyRequest.self).state == .cancelled)
            #expect(try await app.v1.get(app.v1.path(W.request, expiring.id), token: bob.token).decoded(as: MoneyRequest.self).state == .expired)
            for request in [declined, cancelled, expiring] {
                try expectProblem(try await app.v1.act(W.confirm, on: request.id, by: bob), .conflict, .invalidRequestState)
                try expectProblem(try await app.v1.act(W.decline, on: request.id, by: bob), .conflict, .invalidRequestState)
                try expectProblem(try await app.v1.act(W.cancel, on: request.id, by: ann), .conflict, .invalidRequestState)
            }
            let expired = try await app.v1.get(W.requests.path + "?state=expired", token: ann.token).decoded(as: MoneyRequestPage.self)
            #expect(expired.items.map(\.id) == [expiring.id])
            #expect(try await app.v1.get(W.requests.path + "?state=open", token: ann.token).decoded(as: MoneyRequestPage.self).items.isEmpty)
            try expectProblem(try await app.v1.get(W.requests.path + "?state=lost", token: ann.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.get(W.requests.path + "?direction=sideways", token: ann.token), .badRequest, .invalidParameter)
            #expect(try await app.v1.balance(of: bob) == 100_00)
            // all three events reached both sides
            let bobs = try await app.services.realtime.log.events(of: bob.id, after: 0, limit: 100).map(\.kind)
            #expect(bobs.filter { $0 == "wallet.request.created" }.count == 3 && bobs.filter { $0 == "wallet.request.updated" }.count == 2)
        }
    }

    @Test("confirm and cancel racing: exactly one wins, and money moves only if confirm did", .tags(.engine), arguments: TestEngine.all)
    func confirmAndCancel_race(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            try await app.credit("+79160000002", 1_000_00)
            var requests: [MoneyRequest] = []
            for _ in 0..<6 { requests.append(try await app.v1.ask(10_00, from: bob, by: ann)) }
            let v1 = app.v1

            // MUT: for each request, two confirms and a cancel at once
            var calls: [(request: UUID, name: String, path: String, token: String)] = []
            for request in requests {
                let id = request.id.uuidString.lowercased()
                calls.append((request.id, "confirm", V1.filling(W.confirm.path, ["id": id]), bob.token))
                calls.append((request.id, "confirm", V1.filling(W.confirm.path, ["id": id]), bob.token))
                calls.append((request.id, "cancel", V1.filling(W.cancel.path, ["id": id]), ann.token))
            }
            let allCalls = calls
            let outcomes = try await Crowd.with(port: try #require(app.client.port), connections: calls.count) { crowd in
                try await withThrowingTaskGroup(of: (UUID, String, Int).self) { group in
                    for call in allCalls {
                        let headers = v1.idempotencyHeaders(UUID().uuidString)
                        group.addTask { (call.request, call.name, try await crowd.post(call.path, body: "", token: call.token, headers: headers).status) }
                    }
                    return try await group.reduce(into: [(UUID, String, Int)]()) { $0.append($1) }
                }
            }

            // validate
            var paid = 0
            for request in requests {
                let mine = outcomes.filter { $0.0 == request.id }
                #expect(mine.filter { $0.2 == 200 }.count == 1, "one winner: \(mine)")
                #expect(mine.filter { $0.2 == 409 }.count == 2, "two losers: \(mine)")
                let state = try await app.v1.get(app.v1.path(W.request, request.id), token: ann.token).decoded(as: MoneyRequest.self).state
                let confirmWon = mine.filter { $0.2 == 200 }.map(\.1) == ["confirm"]
                #expect(state == (confirmWon ? .paid : .cancelled), "\(mine)")
                if confirmWon { paid += 1 }
            }
            #expect(try await app.v1.balance(of: ann) == Int64(paid) * 10_00)
            #expect(try await app.v1.balance(of: bob) == 1_000_00 - Int64(paid) * 10_00)
            #expect(try await app.services.wallet.wallets.audit().isEmpty)
        }
    }

    @Test("asking is checked: amount, whom, yourself, and the daily budget", .tags(.engine), arguments: TestEngine.all)
    func create_refusals(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.wallet.requestsPerDay = 2 }) { app in
            // setup
            let ann = try await app.v1.walletHolder("ann", phone: "+79160000001")
            let bob = try await app.v1.walletHolder("bob", phone: "+79160000002")
            func ask(_ body: String, key: String = UUID().uuidString) async throws -> TestResponse {
                try await app.v1.post(W.createRequest.path, json: body, token: ann.token, headers: app.v1.idempotencyHeaders(key))
            }

            // MUT + validate
            try expectProblem(try await ask(#"{"from":{"tag":"bob"},"amount":0,"kind":"invoice"}"#), .badRequest, .invalidAmount)
            try expectProblem(try await ask(#"{"from":{"tag":"bob"},"amount":5,"kind":"gift"}"#), .badRequest, .malformedBody)
            try expectProblem(try await ask(#"{"from":{"tag":"ann"},"amount":5,"kind":"loan"}"#), .unprocessableContent, .notYourself)
            try expectProblem(try await ask(#"{"from":{"tag":"zed"},"amount":5,"kind":"loan"}"#), .notFound, .recipientNotFound)
            try expectProblem(try await ask(#"{"from":{"tag":"bob"},"amount":99999999999,"kind":"loan"}"#), .unprocessableContent, .transferLimitExceeded)
            _ = try await app.v1.ask(1, from: bob, by: ann)
            _ = try await app.v1.ask(1, from: bob, by: ann)
            try expectProblem(try await ask(#"{"from":{"tag":"bob"},"amount":5,"kind":"invoice"}"#), .tooManyRequests, .rateLimited)
        }
    }
}
