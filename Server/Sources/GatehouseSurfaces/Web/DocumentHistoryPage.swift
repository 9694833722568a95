import Crypto
import Foundation
import GatehouseFoundation
import GatehouseSignToLogin
import HTTPTypes
import Hummingbird
import Mustache

/// `/documents/?documentid=…`: the signing history of a document, the link a signed PDF carries
/// (the Sign To Login spec). In a desktop browser it is the history; on an iPhone or iPad the
/// spec's script first tries the app (`stl://user/?documentid=…`) and then offers the App Store.
/// English or Russian by `Accept-Language`; the one inline script runs by a per-response nonce.
package enum DocumentHistoryPage {
    package static let style = """
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; color: #1d1d1f; }
        main { max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
        h1 { font-size: 1.3rem; }
        .meta { color: #555; font-size: .9rem; word-break: break-all; }
        table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 12px; overflow: hidden; box-shadow: 0 1px 4px rgba(0,0,0,.06); }
        th, td { text-align: left; padding: .55rem .6rem; border-bottom: 1px solid #eee; font-size: .92rem; vertical-align: top; }
        td img { width: 56px; height: 56px; object-fit: cover; border-radius: 8px; }
        .low { color: #b3261e; font-weight: 600; }
        .ok { color: #1d7a32; }
        code { font-size: .8rem; word-break: break-all; }
        .empty, .missing { background: #fff; padding: 1rem; border-radius: 12px; }
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "{{lang}}", title: "{{title}}", style: style, body: """
        <main id="history" data-document="{{documentId}}" data-app-url="{{appURL}}" data-store-url="{{storeURL}}" data-question="{{question}}">
        <h1>{{title}}</h1>
        {{#found}}
        <p class="meta">{{documentLabel}}: <code>{{documentId}}</code></p>
        {{#hasEntries}}
        <table id="signings">
        <tr><th>{{photoLabel}}</th><th>{{signerLabel}}</th><th>{{matchLabel}}</th><th>{{timeLabel}}</th><th>{{placeLabel}}</th><th>{{idsLabel}}</th></tr>
        {{#entries}}
        <tr data-signature="{{id}}">
        <td>{{#photo}}<img src="{{photo}}" alt="">{{/photo}}</td>
        <td>{{name}}</td>
        <td class="{{matchClass}}">{{similarity}}{{#warning}} · {{warning}}{{/warning}}</td>
        <td>{{time}}</td>
        <td>{{place}}</td>
        <td><code>{{id}}</code><br><code>{{hash}}</code></td>
        </tr>
        {{/entries}}
        </table>
        {{/hasEntries}}
        {{^hasEntries}}<p class="empty">{{noSignatures}}</p>{{/hasEntries}}
        {{/found}}
        {{^found}}<p class="missing">{{notFound}}</p>{{/found}}
        </main>
        {{#found}}
        <script nonce="{{nonce}}">
        (function () {
          var page = document.getElementById('history');
          var userAgent = window.navigator.userAgent;
          if (!(userAgent.match(/iPad/i) || userAgent.match(/iPhone/i))) { return; }
          window.location = page.dataset.appUrl;
          setTimeout(function () {
            if (document.hidden) { return; }
            if (confirm(page.dataset.question)) { window.location = page.dataset.storeUrl; }
          }, 300);
        })();
        </script>
        {{/found}}
        """))

    package static func response(found: Bool, documentID: String, entries: [SignatureDocuments.Entry], language: AppLanguage, storeURL: String) -> Response {
        func l(_ key: String, _ args: [String] = []) -> String { LocalizedText(key, args).render(language) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language == .ru ? "ru_RU" : "en_US")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "dd.MM.yyyy HH:mm 'UTC'"
        let rows: [[String: Any]] = entries.map { entry in
            var row: [String: Any] = [
                "id": entry.signatureID, "hash": entry.documentHash, "name": entry.signer,
                "similarity": String(format: "%.0f%%", entry.similarity * 100), "matchClass": entry.lowMatch ? "low" : "ok",
                "time": formatter.string(from: entry.signedAt),
                "place": [entry.city, entry.country, entry.address].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", "),
            ]
            if entry.lowMatch { row["warning"] = l("page.history.lowMatch") }
            // Relative, so the page's own origin serves it under the CSP.
            if entry.photoURL != nil { row["photo"] = "/signature-photos/" + entry.signatureID }
            return row
        }
        let nonce = Secrets.systemToken()
        let values: [String: Any] = [
            "lang": language.rawValue, "title": l("page.history.title"), "found": found, "documentId": documentID,
            "documentLabel": l("page.history.document"), "hasEntries": !rows.isEmpty, "entries": rows,
            "photoLabel": l("page.history.photo"), "signerLabel": l("page.history.signer"), "matchLabel": l("page.history.match"),
            "timeLabel": l("page.history.time"), "placeLabel": l("page.history.place"), "idsLabel": l("page.history.ids"),
            "noSignatures": l("page.history.none"), "notFound": l("page.history.notFound"), "nonce": nonce,
            "appURL": "stl://user/?documentid=" + documentID, "storeURL": storeURL, "question": l("page.history.getApp"),
        ]
        let styleHash = Data(SHA256.hash(data: Data(style.utf8))).base64EncodedString()
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .contentSecurityPolicy: "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'sha256-\(styleHash)'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
            .vary: "Accept-Language",
        ]
        return Response(status: found ? .ok : .notFound, headers: headers, body: .init(byteBuffer: ByteBuffer(string: template.render(values))))
    }
}
