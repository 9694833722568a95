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
    /// from them. Bodies are JSON or forms read field by field, and every answer is a JSON object
    /// with a string `res` (their members are in the document's prose).
    public enum Endpoints {
        public static let register = Endpoint<FormBody, RawBody>(.post, Path.register, access: .anyone)
        public static let login = Endpoint<FormBody, RawBody>(.post, Path.login, access: .anyone)
        public static let authenticate = Endpoint<FormBody, RawBody>(.post, Path.authenticate, access: .anyone)
        public static let saveDocument = Endpoint<FormBody, RawBody>(.post, Path.saveDocument, access: .anyone)
        public static let openDocument = Endpoint<FormBody, RawBody>(.post, Path.openDocument, access: .anyone)
        public static let photo = Endpoint<NoContent, RawBody>(.get, Path.photos + "{id}", access: .anyone)
        public static let history = Endpoint<NoContent, RawBody>(.get, Path.history, access: .anyone, query: [QueryParameter("documentid", .text)])

        public static let all: [any EndpointDeclaration] = [register, login, authenticate, saveDocument, openDocument, photo, history]
    }

    /// `res` of every answer: the spec's 0–3 (their meaning depends on the endpoint) and the
    /// codes numbered from 10 for what the spec does not name.
    public enum Res {
        public static let ok = "0"
        /// The API key is unknown or its app disabled; `/opendocument/`: the document changed outside.
        public static let keyRefusedOrDocumentChanged = "1"
        /// `/register/`: not all signatures were valid; elsewhere: the user does not exist.
        public static let signaturesIncompleteOrUnknownUser = "2"
        /// The account has no model for this type of device.
        public static let notEnrolledForDevice = "3"
        public static let invalidInput = "10"
        public static let tooLarge = "11"
        public static let rateLimited = "12"
        public static let emailConfirmationRequired = "13"
        public static let invalidEmailCode = "14"
        public static let documentConflict = "15"
        public static let documentNotFound = "16"
        /// `/authenticate/`: the signature is a copy of one the server has seen (a replay).
        public static let signatureReplayed = "17"
        /// `/savedocument/`: no `sessionid` of the person the email names; sign in again.
        public static let sessionRequired = "18"
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
