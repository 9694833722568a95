import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// What the wallet pushes (docs/push.md): money received (or a top-up paid), a money request and its answer, in
/// the `wallet` thread. `EventPushes` writes them for each device.
package struct WalletPushes: PushComposer {
    package init() {}

    /// What a push of money needs of its payload: the transfer.
    private struct Moved: Decodable {
        var transfer: Transfer
    }

    package func notices(for events: [PendingEvent], on tx: any GatehouseDatabase) async throws -> [PushNotice] {
        var notices: [PushNotice] = []
        for event in events {
            let data = Data(event.data.utf8)
            switch event.kind {
            case .walletTransfer:
                // The event's `TransferResult`, or a push written before the balance was known (`{"transfer": …}`).
                guard let transfer = try? V1.decoder.decode(Moved.self, from: data).transfer, transfer.to.id == event.account else { continue }
                let body = transfer.from.map { LocalizedText("push.money.body", [PushNotice.name($0.firstName, $0.lastName, $0.tag), PushNotice.money(transfer.amount)]) }
                    ?? LocalizedText("push.money.topUp", [PushNotice.money(transfer.amount)])
                notices.append(PushNotice(account: event.account, title: LocalizedText("push.money.title"), body: body, thread: "wallet",
                                          data: ["kind": "money", "transfer": transfer.id.uuidString]))
            case .walletRequestCreated, .walletRequestUpdated:
                guard let request = try? V1.decoder.decode(MoneyRequest.self, from: data) else { continue }
                let other = request.requester.id == event.account ? request.payer : request.requester
                let who = PushNotice.name(other.firstName, other.lastName, other.tag)
                let key: String = switch (event.kind, request.state) {
                case (.walletRequestCreated, _): "push.request.asked"
                case (_, .declined): "push.request.declined"
                case (_, .cancelled): "push.request.cancelled"
                case (_, .paid): "push.request.paid"
                case (_, .repaid): "push.request.repaid"
                default: "push.request.changed"
                }
                notices.append(PushNotice(account: event.account, title: LocalizedText("push.request.title"),
                                          body: LocalizedText(key, [who, PushNotice.money(request.amount)]), thread: "wallet",
                                          data: ["kind": "money_request", "request": request.id.uuidString]))
            default:
                continue
            }
        }
        return notices
    }
}
