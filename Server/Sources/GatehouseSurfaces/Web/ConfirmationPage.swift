import Crypto
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import HTTPTypes
import Hummingbird
import Mustache

/// The small localized page behind the link of a confirmation mail. Opening the link (GET)
/// changes nothing: it shows the address and a button, and the button confirms by POST, so a
/// mail filter or link preview that fetches every link confirms nobody's address.
package enum ConfirmationPage {
    package static let style = """
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; }
        main { max-width: 28rem; margin: 15vh auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
        h1 { font-size: 1.3rem; margin-top: 0; }
        .confirmed, .already { color: #1d7a32; }
        .invalid { color: #b3261e; }
        button { font: inherit; padding: .6rem 1.2rem; border: 0; border-radius: 8px; background: #0a66d8; color: #fff; cursor: pointer; }
        .hint { color: #555; font-size: .9rem; }
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "{{lang}}", title: "{{title}}", style: style, body: """
        <main>
        <h1>{{title}}</h1>
        <p class="{{state}}" data-state="{{state}}">{{message}}</p>
        {{#token}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="id" value="{{token}}">
        <button type="submit">{{button}}</button>
        </form>
        <p class="hint">{{hint}}</p>
        {{/token}}
        </main>
        """))

    /// The headers of every HTML page: nothing but the inline style and a form posting back here
    /// may run or load; no framing, no sniffing, no referrer (the link carries a secret).
    package static let securityHeaders: HTTPFields = {
        let styleHash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        return [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; style-src 'sha256-\(styleHash)'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            HTTPField.Name("X-Frame-Options")!: "DENY",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
        ]
    }()

    package static func response(outcome: EmailService.ConfirmationOutcome, language: AppLanguage, action: String) -> Response {
        var values: [String: String] = [
            "lang": language.rawValue,
            "title": LocalizedText("page.confirm.title").render(language),
        ]
        let status: HTTPResponse.Status
        switch outcome {
        case .pending(let email, let token):
            status = .ok
            values["state"] = "pending"
            values["message"] = LocalizedText("page.confirm.pending", [email]).render(language)
            values["token"] = token
            values["action"] = action
            values["button"] = LocalizedText("page.confirm.button").render(language)
            values["hint"] = LocalizedText("page.confirm.hint").render(language)
        case .confirmed(let email):
            status = .ok
            values["state"] = "confirmed"
            values["message"] = LocalizedText("page.confirm.confirmed", [email]).render(language)
        case .alreadyConfirmed:
            status = .ok
            values["state"] = "already"
            values["message"] = LocalizedText("page.confirm.already").render(language)
        case .invalid:
            status = .badRequest
            values["state"] = "invalid"
            values["message"] = LocalizedText("page.confirm.invalid").render(language)
        }
        return Response(status: status, headers: securityHeaders, body: .init(byteBuffer: ByteBuffer(string: template.render(values))))
    }
}
