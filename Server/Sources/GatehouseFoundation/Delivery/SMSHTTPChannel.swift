import AsyncHTTPClient
import Foundation
import GatehouseAPI
import NIOCore
import NIOHTTP1

/// Sends SMS through any HTTP gateway: URL, method, headers and body template come from the
/// configuration; `{{to}}`, `{{text}}` and `{{code}}` are replaced, escaped for the body's
/// content type (JSON string escaping, form encoding, or as is) and percent-encoded in the URL.
package struct SMSHTTPChannel: DeliveryChannel {
    package let settings: GatehouseConfiguration.SMSHTTPSettings
    package let httpClient: HTTPClient
    package var name: String { "sms-http" }

    package func deliver(_ message: OutgoingMessage) async throws {
        let values = ["to": message.destination, "text": message.body, "code": message.code ?? ""]
        let url = Self.render(settings.url, values: values, escape: FormURLEncoding.escape)
        var request = HTTPClientRequest(url: url)
        request.method = HTTPMethod(rawValue: settings.method)
        for (name, value) in settings.headers {
            request.headers.add(name: name, value: value)
        }
        if settings.method != "GET" {
            let escape: (String) -> String
            if settings.contentType.lowercased().contains("json") {
                escape = JSONString.escape
            } else if settings.contentType.lowercased().contains("x-www-form-urlencoded") {
                escape = FormURLEncoding.escape
            } else {
                escape = { $0 }
            }
            let body = Self.render(settings.bodyTemplate, values: values, escape: escape)
            request.headers.replaceOrAdd(name: "Content-Type", value: settings.contentType)
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: .seconds(Int64(settings.timeoutSeconds)))
        } catch {
            throw DeliveryError.transient("SMS gateway unreachable: \(error)")
        }
        let text = (try? await response.body.collect(upTo: 4096)).map { String(buffer: $0) } ?? ""
        let summary = "SMS gateway answered \(response.status.code): \(text.prefix(300))"
        switch response.status.code {
        case 200..<300: return
        case 408, 429, 500...: throw DeliveryError.transient(summary)
        default: throw DeliveryError.permanent(summary)
        }
    }

    package static func render(_ template: String, values: [String: String], escape: (String) -> String) -> String {
        var result = template
        for (key, value) in values {
            result = result.replacingOccurrences(of: "{{\(key)}}", with: escape(value))
        }
        return result
    }

    package init(settings: GatehouseConfiguration.SMSHTTPSettings, httpClient: HTTPClient) {
        self.settings = settings
        self.httpClient = httpClient
    }
}
