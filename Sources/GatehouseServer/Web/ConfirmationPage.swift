import Hummingbird
import Mustache

/// The small localized page behind the link of a confirmation mail.
enum ConfirmationPage {
    static let template: MustacheTemplate = try! MustacheTemplate(string: """
        <!doctype html>
        <html lang="{{lang}}">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}}</title>
        <style>
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; }
        main { max-width: 28rem; margin: 15vh auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
        h1 { font-size: 1.3rem; margin-top: 0; }
        .confirmed, .already { color: #1d7a32; }
        .invalid { color: #b3261e; }
        </style>
        </head>
        <body>
        <main>
        <h1>{{title}}</h1>
        <p class="{{state}}" data-state="{{state}}">{{message}}</p>
        </main>
        </body>
        </html>
        """)

    static func response(outcome: AccountService.ConfirmationOutcome, language: AppLanguage) -> Response {
        let state: String
        let message: String
        let status: HTTPResponse.Status
        switch outcome {
        case .confirmed(let email):
            (state, status) = ("confirmed", .ok)
            message = LocalizedText("page.confirm.confirmed", [email]).render(language)
        case .alreadyConfirmed:
            (state, status) = ("already", .ok)
            message = LocalizedText("page.confirm.already").render(language)
        case .invalid:
            (state, status) = ("invalid", .badRequest)
            message = LocalizedText("page.confirm.invalid").render(language)
        }
        let html = template.render([
            "lang": language.rawValue,
            "title": LocalizedText("page.confirm.title").render(language),
            "state": state,
            "message": message,
        ])
        return Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store", .init("Referrer-Policy")!: "no-referrer"],
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }
}
