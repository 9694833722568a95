import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseWallet
import HTTPTypes
import Hummingbird
import NIOCore

/// The payment provider's side of top-ups (docs/wallet.md, "Money in"): its webhook
/// (`POST /webhooks/stripe`, read byte for byte, since the signature covers the raw body), the
/// page it sends the person back to, and, in development, the local provider's payment page.
package struct PaymentsController: Sendable {
    package let topUps: TopUpService
    package let limits: GatehouseConfiguration.Limits
    package let wallet: GatehouseConfiguration.Wallet
    package let edge: SurfaceEdge

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.route(ServerPages.Payments.webhook, use: webhook)
        router.route(ServerPages.Payments.returnPage, use: returnPage)
        if wallet.topUps.provider == .local {
            router.route(ServerPages.Payments.localPage, use: localPage)
            router.route(ServerPages.Payments.localPay, use: localPay)
        }
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> AuditOrigin {
        AuditOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                    device: request.headers[.userAgent].map { String($0.prefix(200)) }, requestID: context.requestID)
    }

    /// Stripe's notification: 200 `{"received": true, "outcome": …}` when believed (whatever it
    /// came to; a repeat is answered as the first), 400 `notification_refused` otherwise.
    @Sendable func webhook(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let body = try await request.collectBody(upTo: limits.maxBodyBytes)
        let signature = request.headers[HTTPField.Name("Stripe-Signature")!]
        do {
            let outcome = try await topUps.notify(payload: Data(body.readableBytesView), signature: signature, origin: origin(request, context))
            return try JSONResponse.make(["received": "true", "outcome": outcome.rawValue])
        } catch let error as GatehouseError {
            // The provider reads only the status; the problem document says why, for whoever
            // reads its dashboard.
            let (status, headers, body) = ProblemDocuments.rendered(error, request: request)
            return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    /// Where the provider sends the person back: nothing to read here, the app asks the server.
    @Sendable func returnPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .ru)
        return page(title: LocalizedText("page.topUp.title").render(language), state: "done",
                    message: LocalizedText("page.topUp.returned").render(language), language: language)
    }

    /// The local provider's payment page: the amount and a button that pays it.
    @Sendable func localPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let payment = context.parameters.get("id"), let (row, _) = try await topUps.localPayment(payment) else {
            return page(title: "Local payment", state: "invalid", message: "No such payment.", status: .notFound)
        }
        let view = topUps.view(row)
        guard view.state == .pending else {
            return page(title: "Local payment", state: view.state.rawValue, message: "This payment is \(view.state.rawValue).")
        }
        return page(title: "Local payment", state: "pending",
                    message: "Development mode: no card is charged. Pay \(Kopecks.format(row.amount, grouping: " ")) ₽ into the wallet?",
                    form: (payment, "Pay \(Kopecks.format(row.amount, grouping: " ")) ₽", "The local stand-in for the payment provider (GATEHOUSE_TOPUP_PROVIDER=local)."))
    }

    /// Pays the local page: the server is sent the notification Stripe would send, signed.
    @Sendable func localPay(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let payment = context.parameters.get("id"), let (row, local) = try await topUps.localPayment(payment) else {
            return page(title: "Local payment", state: "invalid", message: "No such payment.", status: .notFound)
        }
        let (payload, signature) = local.paidNotification(payment: payment, topUp: row.id, amount: row.amount, currency: row.currency, now: topUps.clock.now())
        let outcome: TopUpService.Outcome
        do {
            outcome = try await topUps.notify(payload: payload, signature: signature, origin: origin(request, context))
        } catch let error as GatehouseError {
            let (status, _, _) = ProblemDocuments.rendered(error, request: request)
            return page(title: "Local payment", state: "refused", message: error.message.render(.en), status: status)
        }
        let message = switch outcome {
        case .credited: "Paid: the wallet is credited with \(Kopecks.format(row.amount, grouping: " ")) ₽."
        case .refunded: "Paid, and given back at once: the account is being deleted."
        default: "Already paid."
        }
        return page(title: "Local payment", state: outcome == .credited ? "paid" : outcome == .refunded ? "refunded" : "already", message: message)
    }

    private func page(title: String, state: String, message: String, language: AppLanguage = .en, status: HTTPResponse.Status = .ok,
                      form: (id: String, button: String, hint: String)? = nil) -> Response {
        var values = ["lang": language.rawValue, "title": title, "state": state, "message": message]
        if let form {
            values["token"] = form.id
            values["action"] = "/dev/payments/" + form.id
            values["button"] = form.button
            values["hint"] = form.hint
        }
        return Response(status: status, headers: ConfirmationPage.securityHeaders,
                        body: .init(byteBuffer: ByteBuffer(string: ConfirmationPage.template.render(values))))
    }

    package init(topUps: TopUpService, limits: GatehouseConfiguration.Limits, wallet: GatehouseConfiguration.Wallet, edge: SurfaceEdge) {
        self.topUps = topUps
        self.limits = limits
        self.wallet = wallet
        self.edge = edge
    }
}
