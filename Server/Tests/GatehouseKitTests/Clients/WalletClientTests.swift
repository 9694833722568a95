import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that delivers money-moving requests to the server and then loses the first
/// `losses` answers on the way back, as a dropped connection does after the server committed.
final class LosingTransport: HTTPTransport, @unchecked Sendable {
    private let inner = URLSessionTransport()
    private let lock = NSLock()
    private var losses: Int
    private(set) var delivered = 0

    init(losses: Int) { self.losses = losses }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let answer = try await inner.send(request)
        guard request.httpMethod == "POST", request.url?.path.hasPrefix("/v1/wallet/") == true else { return answer }
        let lose = lock.withLock { () -> Bool in
            delivered += 1
            guard losses > 0 else { return false }
            losses -= 1
            return true
        }
        if lose { throw URLError(.networkConnectionLost) }
        return answer
    }
}

@Suite("WalletClient against a live server")
struct WalletClientTests {
    @Test("a payment whose answer is lost is sent again with its key and paid once")
    func lostAnswer_isResentWithTheSameKey_andPaysOnce() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await server.walletUser("ann", phone: "+79160000001")
            _ = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000001", "100")
            let transport = LosingTransport(losses: 2)
            let flaky = AccountsClient(baseURL: server.baseURL, sessionStore: InMemorySessionStore(), transport: transport, language: "en")
            _ = try await flaky.login(identifier: "ann", password: "Secret-42!")
            let wallet = WalletClient(core: flaky.core, retries: 2, retryDelay: 0.01)

            // MUT
            let result = try await wallet.send(NewTransfer(to: PartyReference(tag: "bob"), amount: 30_00), intent: PaymentIntent())

            // validate: three deliveries of one intent, one payment
            #expect(transport.delivered == 3)
            #expect(result.balance == 70_00 && result.transfer.amount == 30_00)
            #expect(try await ann.wallet.wallet().balance == 70_00)
            #expect(try await ann.wallet.transactions().items.count == 2)
        }
    }

    @Test("a top-up whose answer is lost is started once (one payment at the provider); it reads pending until paid, then paid with its movement; refusals carry the server's code")
    func topUp_lostAnswer_startsOnePayment() async throws {
        try await withLiveServer { server in
            // setup
            _ = try await server.walletUser("ann", phone: "+79160000001")
            let transport = LosingTransport(losses: 1)
            let flaky = AccountsClient(baseURL: server.baseURL, sessionStore: InMemorySessionStore(), transport: transport, language: "en")
            _ = try await flaky.login(identifier: "ann", password: "Secret-42!")
            let wallet = WalletClient(core: flaky.core, retries: 2, retryDelay: 0.01)

            // MUT
            let intent = PaymentIntent()
            let started = try await wallet.startTopUp(amount: 250_00, intent: intent)
            let again = try await wallet.startTopUp(amount: 250_00, intent: intent)
            let pending = try await wallet.topUp(started.id)
            let page = try #require(started.confirmationUrl.flatMap(URL.init(string:)))
            let paid = try await server.outbox.payLocally(page)
            let done = try await wallet.topUp(started.id)

            // validate
            #expect(transport.delivered == 3, "the lost answer's retry, then the app's repeat")
            #expect(again == started && pending.state == .pending && pending.confirmationUrl == started.confirmationUrl)
            #expect(paid == true && done.state == .paid && done.transferId != nil && done.confirmationUrl == nil)
            #expect(try await wallet.wallet().balance == 250_00)
            do {
                _ = try await wallet.startTopUp(amount: 50, intent: PaymentIntent())
                Issue.record("a top-up under the least was taken")
            } catch let error as GatehouseClientError {
                #expect(error.code == .invalidAmount)
            }
        }
    }

    @Test("an intent repeated by the app answers the first payment; a new intent pays again; refusals carry the server's code")
    func intents_andRefusals() async throws {
        try await withLiveServer { server in
            // setup
            let ann = try await server.walletUser("ann", phone: "+79160000001")
            let bob = try await server.walletUser("bob", phone: "+79160000002")
            try await server.credit("+79160000001", "10")
            let intent = PaymentIntent()
            let transfer = NewTransfer(to: PartyReference(phone: "+7 916 000-00-02"), amount: 4_00, comment: "tea")

            // MUT
            let first = try await ann.wallet.send(transfer, intent: intent)
            let again = try await ann.wallet.send(transfer, intent: intent)
            let second = try await ann.wallet.send(transfer, intent: PaymentIntent())
            let poor = await #expect(throws: GatehouseClientError.self) {
                try await ann.wallet.send(transfer, intent: PaymentIntent())
            }
            let reused = await #expect(throws: GatehouseClientError.self) {
                try await ann.wallet.send(NewTransfer(to: PartyReference(tag: "bob"), amount: 1), intent: intent)
            }
            let nobody = await #expect(throws: GatehouseClientError.self) {
                try await ann.wallet.recipient(PartyReference(tag: "nobody"))
            }

            // validate
            #expect(again == first)
            #expect(second.transfer.id != first.transfer.id && second.balance == 2_00)
            #expect(poor?.code == .insufficientFunds)
            #expect(reused?.code == .idempotencyKeyReused)
            #expect(nobody?.code == .recipientNotFound)
            #expect(try await bob.wallet.wallet().balance == 8_00)
            #expect(try await ann.wallet.recipient(PartyReference(phone: "+79160000002")).displayName == "Bob Smith")
            // a loan, paid and repaid, through the client
            let loan = try await bob.wallet.ask(NewMoneyRequest(from: PartyReference(tag: "ann"), amount: 1_00, kind: .loan), intent: PaymentIntent())
            let incoming = try await ann.wallet.requests(direction: .incoming, state: .open)
            #expect(incoming.items.map(\.id) == [loan.id])
            let paid = try await ann.wallet.confirm(loan.id, intent: PaymentIntent())
            let repaid = try await bob.wallet.repay(loan.id, intent: PaymentIntent())
            #expect(paid.request.state == .paid && repaid.request.state == .repaid && repaid.balance == 8_00)
            #expect(try await bob.wallet.request(loan.id).repaymentId == repaid.transfer.id)
            #expect(try await ann.wallet.transfer(paid.transfer.id).kind == .requestPayment)
        }
    }
}
