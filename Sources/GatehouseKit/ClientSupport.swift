import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the HTTP clients (`AccountsClient`, `PhoneAccountsClient`) do alike: the default
// `Accept-Language`, the headers of a request, and a transport failure turned into a
// `GatehouseClientError`.

/// A query string of the values given (nil and empty ones left out), names sorted, each value
/// percent-escaped: what every client's list calls send after `?`.
func queryString(_ values: [String: String?]) -> String? {
    var allowed = CharacterSet.urlQueryAllowed
    allowed.remove(charactersIn: "+&=?#")
    let pairs = values.compactMap { name, value -> String? in
        guard let value, !value.isEmpty else { return nil }
        return "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)"
    }.sorted()
    return pairs.isEmpty ? nil : pairs.joined(separator: "&")
}

/// The language a client asks the server's messages in when the app names none: `ru` on a
/// Russian device, `en` otherwise (as `Localizer.device` of the screens chooses).
func defaultLanguage() -> String {
    (Locale.preferredLanguages.first ?? "en").lowercased().hasPrefix("ru") ? "ru" : "en"
}

extension URLRequest {
    /// Sets `Accept-Language` (when there is one) and, for an authenticated call, the Bearer
    /// header of `session`; an authenticated call without a session is
    /// ``GatehouseClientError/notLoggedIn``.
    mutating func setHeaders(language: String?, authenticated: Bool, session: @autoclosure () -> GatehouseSession?) throws {
        setValue(GatehouseVersion.userAgent, forHTTPHeaderField: "User-Agent")
        if let language { setValue(language, forHTTPHeaderField: "Accept-Language") }
        if authenticated {
            guard let session = session() else { throw GatehouseClientError.notLoggedIn }
            setValue("Bearer \(session.token)", forHTTPHeaderField: "Authorization")
        }
    }
}

extension HTTPTransport {
    /// Sends `request`; a failure becomes ``GatehouseClientError/transport(_:)``, while a
    /// cancelled call stays a `CancellationError` and a ``GatehouseClientError`` passes through.
    func exchange(_ request: URLRequest, progress: UploadProgress? = nil) async throws -> (Data, HTTPURLResponse) {
        do {
            if let progress { return try await send(request, progress: progress) }
            return try await send(request)
        } catch let error as GatehouseClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch {
            throw GatehouseClientError.transport(error.localizedDescription)
        }
    }
}
