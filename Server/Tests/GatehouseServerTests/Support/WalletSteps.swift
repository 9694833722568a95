import Foundation
import GatehouseAPI
import GatehouseServer
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Wallet scenario steps over the wire, each expecting its success status.
extension V1Client {
    typealias W = V1.Wallet

    /// Signs up by email with a tag (as the wallet spec does), verifies a phone by SMS code and
    /// attaches a wallet.
    func walletHolder(_ tag: String, phone: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Someone {
        let someone = try await person(tag, sourceLocation: sourceLocation)
        try await verifyPhone(phone, of: someone, sourceLocation: sourceLocation)
        let attached = try await post(W.attach.path, json: "", token: someone.token)
        #expect(attached.status == .created, "attach: \(attached.text)", sourceLocation: sourceLocation)
        return someone
    }

    func verifyPhone(_ phone: String, of someone: Someone, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let sent = try await post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: phone, currentPassword: "secret-91!"), token: someone.token)
        #expect(sent.status == .accepted, "phone code: \(sent.text)", sourceLocation: sourceLocation)
        let code = try await self.code(sentTo: try sent.decoded(as: CodeSent.self).destination, sourceLocation: sourceLocation)
        let verified = try await post(V1.Accounts.verifyPhone.path, CodeVerification(code: code, phone: phone), token: someone.token)
        #expect(verified.status == .ok, "verify phone: \(verified.text)", sourceLocation: sourceLocation)
    }

    func idempotencyHeaders(_ key: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[HTTPField.Name(W.idempotencyKeyHeader)!] = key
        return headers
    }

    /// `POST /v1/wallet/transfers` with a key (a fresh one unless given), unchecked.
    func pay(_ amount: Int64, to reference: PartyReference, by someone: Someone, comment: String? = nil, key: String = UUID().uuidString) async throws -> TestResponse {
        try await post(W.transfer.path, NewTransfer(to: reference, amount: amount, comment: comment), token: someone.token, headers: idempotencyHeaders(key))
    }

    /// The same transfer with one key sent `times` times at once, each on its own connection (a tap
    /// repeated, a retry racing the first): each answer's status and body.
    func payAtOnce(_ times: Int, _ amount: Int64, to reference: PartyReference, by someone: Someone, key: String) async throws -> [(status: Int, body: String)] {
        let body = String(buffer: try Self.encode(NewTransfer(to: reference, amount: amount, comment: nil)))
        let headers = idempotencyHeaders(key)
        return try await Crowd.with(port: try #require(app.client.port), connections: times) { crowd in
            try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
                for _ in 0..<times {
                    group.addTask {
                        let answer = try await crowd.post(W.transfer.path, body: body, token: someone.token, headers: headers)
                        return (answer.status, answer.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    /// A transfer that must succeed; answers it with my balance.
    @discardableResult
    func paid(_ amount: Int64, to other: Someone, by someone: Someone, comment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> TransferResult {
        let response = try await pay(amount, to: PartyReference(tag: other.tag), by: someone, comment: comment)
        #expect(response.status == .created, "transfer: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: TransferResult.self)
    }

    func balance(of someone: Someone, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int64 {
        let response = try await get(W.wallet.path, token: someone.token)
        #expect(response.status == .ok, "wallet: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: WalletInfo.self).balance
    }

    func ask(_ amount: Int64, from other: Someone, by someone: Someone, kind: MoneyRequestKind = .invoice, comment: String? = nil,
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> MoneyRequest {
        let response = try await post(W.createRequest.path, NewMoneyRequest(from: PartyReference(tag: other.tag), amount: amount, kind: kind, comment: comment),
                                      token: someone.token, headers: idempotencyHeaders(UUID().uuidString))
        #expect(response.status == .created, "request: \(response.text)", sourceLocation: sourceLocation)
        return try response.decoded(as: MoneyRequest.self)
    }

    /// `POST /v1/wallet/requests/{id}/<action>` with a key, unchecked.
    func act(_ endpoint: any EndpointDeclaration, on request: UUID, by someone: Someone, key: String = UUID().uuidString) async throws -> TestResponse {
        try await post(V1.filling(endpoint.path, ["id": request.uuidString.lowercased()]), json: "", token: someone.token, headers: idempotencyHeaders(key))
    }
}

extension TestHarness {
    /// The operator's top-up (what `gatehouse wallet credit` runs).
    @discardableResult
    func credit(_ phone: String, _ kopecks: Int64) async throws -> TransferResult {
        try await services.wallet.wallets.credit(phone: phone, amount: kopecks, reason: "test top-up")
    }
}
