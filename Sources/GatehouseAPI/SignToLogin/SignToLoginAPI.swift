import Foundation

/// The wire contract of the Sign To Login service (the Sign To Login spec,
/// docs/sign-to-login.md): the five endpoints, the `res` codes of their answers and the
/// history page's links. The server and `SignToLoginClient` use these; nothing else spells them.
public enum SignToLoginAPI {
    /// The spec's endpoints (POST; the server takes them with or without the trailing slash).
    public enum Path {
        public static let register = "/register/"
        public static let login = "/login/"
        public static let authenticate = "/authenticate/"
        public static let saveDocument = "/savedocument/"
        public static let openDocument = "/opendocument/"
        /// The public history page of a document: `GET /documents/?documentid=…`.
        public static let history = "/documents/"
        /// An attempt's photo: `GET /signature-photos/{signatureid}`.
        public static let photos = "/signature-photos/"
    }

    /// Every operation, declared once: the router serves these, and the API document is built
    /// from them. Bodies are JSON or forms read field by field; every answer is a ``SignToLoginAnswer``.
    public enum Endpoints {
        public static let register = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.register, access: .anyone)
        public static let login = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.login, access: .anyone)
        public static let authenticate = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.authenticate, access: .anyone)
        public static let saveDocument = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.saveDocument, access: .anyone)
        public static let openDocument = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.openDocument, access: .anyone)
        public static let photo = Endpoint<NoContent, RawBody>(.get, Path.photos + "{id}", access: .anyone)
        public static let history = Endpoint<NoContent, RawBody>(.get, Path.history, access: .anyone, query: [QueryParameter("documentid", .text)])

        public static let all: [any EndpointDeclaration] = [register, login, authenticate, saveDocument, openDocument, photo, history]
    }

    /// The spec's date formats: `DD.MM.YYYY HH:MM:SS`, and `DD.MM.YYYY` for a date alone (birthday).
    static let timeFormat = "dd.MM.yyyy HH:mm:ss", dateFormat = "dd.MM.yyyy"

    static func formatter(_ format: String, _ timeZone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = format
        return formatter
    }

    /// A time as the spec writes it, `DD.MM.YYYY HH:MM:SS`, in `timeZone` (the device's for what an
    /// app sends; the server answers in UTC).
    public static func specTime(_ date: Date, timeZone: TimeZone = .current) -> String {
        formatter(timeFormat, timeZone).string(from: date)
    }

    /// Whether `text` is a time or a date the spec's way.
    public static func isSpecTime(_ text: String) -> Bool {
        [timeFormat, dateFormat].contains { formatter($0, TimeZone(identifier: "UTC")!).date(from: text) != nil }
    }

    /// The app's deep link to a document's history (the page's script tries it on iPhone and iPad).
    public static func deepLink(documentID: String) -> String { "stl://user/?documentid=\(documentID)" }

    /// The history page of a document on `server`: what a signed PDF links to.
    public static func historyURL(server: URL, documentID: String) -> URL {
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)!
        components.path = Path.history
        components.queryItems = [URLQueryItem(name: "documentid", value: documentID)]
        return components.url!
    }

    /// The document id a deep link (`stl://user/?documentid=…`) or a history URL names.
    public static func documentID(from url: URL) -> String? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let isLink = components.scheme == "stl" && components.host == "user"
        let isPage = (components.scheme == "https" || components.scheme == "http") && components.path == Path.history
        guard isLink || isPage, let id = components.queryItems?.first(where: { $0.name == "documentid" })?.value,
              !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isHexDigit }) else { return nil }
        return id.lowercased()
    }
}
