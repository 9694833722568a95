import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseWallet
import HTTPTypes
import Hummingbird
import NIOCore

/// `/v1/wallet` (docs/wallet.md): the wallet, transfers and money requests, each operation as
/// `V1.Wallet` declares it. Money-moving operations carry an `Idempotency-Key`: this controller
/// reads it, fingerprints the request, and answers a replay with the first answer's status and
/// bytes (marked `Idempotent-Replayed: true`).
package struct WalletController: Sendable {
    package let wallets: WalletService
    package let requests: MoneyRequestsService
    package let topUps: TopUpService
    package let limits: GatehouseConfiguration.Limits


    package func addRoutes(to v1: some RouterMethods<GatehouseRequestContext>) {
        typealias E = V1.Wallet
        v1.on(E.wallet, limits: limits, use: wallet)
        v1.on(E.attach, raw: attach)
        v1.on(E.transactions, limits: limits, use: transactions)
        v1.on(E.recipient, limits: limits, use: recipient)
        v1.on(E.transfer, raw: transfer)
        v1.on(E.transferDetail, limits: limits, use: transferDetail)
        v1.on(E.createRequest, raw: createRequest)
        v1.on(E.requests, limits: limits, use: listRequests)
        v1.on(E.request, limits: limits, use: request)
        v1.on(E.confirm, raw: { try await answer(.confirm, $0, $1) })
        v1.on(E.repay, raw: { try await answer(.repay, $0, $1) })
        v1.on(E.decline, raw: { try await answer(.decline, $0, $1) })
        v1.on(E.cancel, raw: { try await answer(.cancel, $0, $1) })
        v1.on(E.createTopUp, raw: createTopUp)
        v1.on(E.topUp, limits: limits, use: topUp)
    }

    // MARK: - top-ups

    /// A top-up's key lives on the top-up (the provider is called outside any transaction): a
    /// replay answers the same top-up, 201 again, marked `Idempotent-Replayed`.
    @Sendable package func createTopUp(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let account = try context.requireSessionAccount()
        let input = try await V1Body.decode(NewTopUp.self, from: request, limits: limits)
        let call = try idempotentCall(V1.Wallet.createTopUp, request, account: account, input: input)
        let (topUp, fresh) = try await topUps.create(account, input, key: call.key, fingerprint: call.fingerprint)
        var response = try JSONResponse.make(topUp, status: .created)
        if !fresh { response.headers[HTTPField.Name(V1.Wallet.replayedHeader)!] = "true" }
        return response
    }

    @Sendable package func topUp(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> TopUp {
        let id = try context.id()
        return try await topUps.topUp(id, viewer: context.requireSessionAccount().id)
    }

    // MARK: - the wallet

    @Sendable package func wallet(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> WalletInfo {
        try await wallets.info(context.requireSessionAccount())
    }

    @Sendable package func attach(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (wallet, created) = try await wallets.attach(context.requireSessionAccount())
        return try JSONResponse.make(wallet, status: created ? .created : .ok)
    }

    @Sendable package func transactions(_ input: PageQuery, _ request: Request, context: GatehouseRequestContext) async throws -> WalletTransactionPage {
        try await wallets.transactions(context.requireSessionAccount().id, cursor: input.cursor, limit: input.limit)
    }

    @Sendable package func recipient(_ input: RecipientQuery, _ request: Request, context: GatehouseRequestContext) async throws -> WalletParty {
        try await wallets.recipient(viewer: context.requireSessionAccount().id, input.reference)
    }

    @Sendable package func transferDetail(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> Transfer {
        let id = try context.id()
        return try await wallets.transfer(id, viewer: context.requireSessionAccount().id)
    }

    // MARK: - money

    @Sendable package func transfer(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let account = try context.requireSessionAccount()
        let input = try await V1Body.decode(NewTransfer.self, from: request, limits: limits)
        let call = try idempotentCall(V1.Wallet.transfer, request, account: account, input: input)
        return try await respond(call, request) { try await wallets.transfer(account, input, call: call) }
    }

    @Sendable package func createRequest(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let account = try context.requireSessionAccount()
        let input = try await V1Body.decode(NewMoneyRequest.self, from: request, limits: limits)
        let call = try idempotentCall(V1.Wallet.createRequest, request, account: account, input: input)
        return try await respond(call, request) { try await requests.create(account, input, call: call) }
    }

    private func answer(_ action: MoneyRequestsService.Action, _ request: Request, _ context: GatehouseRequestContext) async throws -> Response {
        let account = try context.requireSessionAccount()
        let id = try context.id()
        // These take no body; one sent anyway is not part of the request's identity.
        switch action {
        case .confirm, .repay:
            let call = try idempotentCall(action == .confirm ? V1.Wallet.confirm : V1.Wallet.repay, request, account: account, input: NoContent())
            return try await respond(call, request) { try await requests.pay(action, account, request: id, call: call) }
        case .decline, .cancel:
            let call = try idempotentCall(action == .decline ? V1.Wallet.decline : V1.Wallet.cancel, request, account: account, input: NoContent())
            return try await respond(call, request) { try await requests.close(action, account, request: id, call: call) }
        }
    }

    @Sendable package func listRequests(_ input: RequestsQuery, _ request: Request, context: GatehouseRequestContext) async throws -> MoneyRequestPage {
        let me = try context.requireSessionAccount()
        return try await requests.list(viewer: me.id, direction: input.direction, state: input.state, with: input.with,
                                       cursor: input.cursor, limit: input.limit)
    }

    @Sendable package func request(_ input: NoContent, _ request: Request, context: GatehouseRequestContext) async throws -> MoneyRequest {
        let id = try context.id()
        return try await requests.request(id, viewer: context.requireSessionAccount().id)
    }

    // MARK: - idempotency

    /// The call a money-moving request makes: its key (400 `idempotency_key_required` without a
    /// valid one) and the fingerprint of its method, path and body (decoded and encoded again, so
    /// spacing and key order do not make a retry look like another request).
    private func idempotentCall<Input: Encodable, Output>(_ endpoint: Endpoint<Input, Output>, _ request: Request, account: AccountSnapshot,
                                                          input: Input) throws -> IdempotentCall {
        let header = HTTPField.Name(V1.Wallet.idempotencyKeyHeader)!
        guard let key = IdempotentCall.validKey(request.headers[header]) else {
            throw GatehouseError(.invalidInput, .idempotencyKeyRequired, LocalizedText("error.idempotencyKeyRequired"), field: V1.Wallet.idempotencyKeyHeader)
        }
        // A transfer's request is written by hand (`JSONWritable`), byte for byte as `V1.encoder` writes it.
        let body = try (input as? any JSONWritable).map { Data($0.jsonBuffer.readableBytesView) } ?? V1.encoder.encode(input)
        return IdempotentCall(account: account.id, key: key,
                              fingerprint: IdempotentCall.fingerprint(method: endpoint.method.rawValue, path: request.uri.path, body: body),
                              successStatus: endpoint.successStatus)
    }

    /// Runs a money-moving call and answers it: fresh, replayed, or refused (a refusal is
    /// remembered for the key, and a retry gets the same problem document).
    private func respond<T: Encodable & Sendable>(_ call: IdempotentCall, _ request: Request, _ run: () async throws -> Idempotent<T>) async throws -> Response {
        do {
            switch try await run() {
            case .fresh(_, let answer): return JSONResponse.make(encoded: answer.body, status: .init(code: answer.status))
            case .replay(let stored): return Self.replay(stored)
            }
        } catch let refusal as IdempotentRefusal {
            let (status, headers, body) = ProblemDocuments.rendered(refusal.error, request: request)
            if let first = try await wallets.rememberRefusal(call, StoredAnswer(status: status.code, body: body)) {
                return Self.replay(first)
            }
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    package static func replay(_ stored: StoredAnswer) -> Response {
        var headers: HTTPFields = [.contentType: stored.status >= 400 ? V1.problemContentType : JSONResponse.contentType]
        headers[HTTPField.Name(V1.Wallet.replayedHeader)!] = "true"
        return Response(status: .init(code: stored.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: stored.body)))
    }

    // MARK: - queries

    private func query(_ request: Request, _ name: String) -> String? {
        request.uri.queryParameters.get(name).flatMap { $0.isEmpty ? nil : $0 }
    }

    package init(wallets: WalletService, requests: MoneyRequestsService, topUps: TopUpService, limits: GatehouseConfiguration.Limits) {
        self.wallets = wallets
        self.requests = requests
        self.topUps = topUps
        self.limits = limits
    }
}

extension NewTransfer: ChecksOwnLengths {}
extension NewMoneyRequest: ChecksOwnLengths {}
