import Foundation

/// The wire contract of the Sign To Login service (the Sign To Login spec,
/// docs/sign-to-login.md): the five endpoints, the `res` codes of their answers and the
/// history page's links. The server and `SignToLoginClient` use these; nothing else spells them.
public enum SignToLoginAPI {
    /// The spec's endpoints (POST; the server takes them with or without the trailing slash).
    public enum Path {
        /// Enrolment.
        public static let register = "/register/"
        /// Whether an address is enrolled.
        public static let login = "/login/"
        /// A signature scored.
        public static let authenticate = "/authenticate/"
        /// A signed document saved.
        public static let saveDocument = "/savedocument/"
        /// A document's history.
        public static let openDocument = "/opendocument/"
        /// The public history page of a document: `GET /documents/?documentid=…`.
        public static let history = "/documents/"
        /// An attempt's photo: `GET /signature-photos/{signatureid}`.
        public static let photos = "/signature-photos/"
    }

    /// Every operation, declared once: the router serves these, and the API document is built
    /// from them. Bodies are JSON or forms read field by field; every answer is a ``SignToLoginAnswer``.
    public enum Endpoints {
        /// `POST /register/`: enrols the person's signatures (with the email code).
        public static let register = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.register, access: .anyone)
            .operation("signatureRegister", "Enrol a signature (the spec's /register/)", tags: "Sign To Login")
            .form([.json, .urlencoded, .multipart], [.text("apikey", required: true), .text("email", required: true), .text("user_name", required: true), .text("company_name"), .text("position"), .text("phone_number"), .text("birthday"), .text("sex", .choice(["male", "female"])), .text("photo"), .json("location", .object), .text("country"), .text("city"), .text("address"), .text("time", required: true), .text("os_version"), .text("device_version"), .json("resolution", .object), .json("pressure", .number), .json("signatures", .arrayOfObjects, required: true), .text("email_code"), .text("enrolment_token")])
        /// `POST /login/`: whether the email has an enrolment for this app and device.
        public static let login = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.login, access: .anyone)
            .operation("signatureLogin", "Is the person enrolled from this type of device (the spec's /login/)", tags: "Sign To Login")
            .form([.json, .urlencoded, .multipart], [.text("apikey", required: true), .text("email", required: true), .text("os_version"), .text("device_version")])
        /// `POST /authenticate/`: scores a signature; signs in at the app's threshold.
        public static let authenticate = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.authenticate, access: .anyone)
            .operation("signatureAuthenticate", "Score a signature (the spec's /authenticate/)", tags: "Sign To Login")
            .form([.json, .urlencoded, .multipart], [.text("apikey", required: true), .text("email", required: true), .text("photo"), .json("location", .object), .text("country"), .text("city"), .text("address"), .text("time"), .json("resolution", .object), .json("pressure", .number), .text("device_version"), .json("signature", .object, required: true), .text("sessionid")])
        /// `POST /savedocument/`: records a signed version of a document.
        public static let saveDocument = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.saveDocument, access: .anyone)
            .operation("signatureSaveDocument", "Record a saved version of a document (the spec's /savedocument/)", tags: "Sign To Login")
            .form([.json, .urlencoded, .multipart], [.text("apikey", required: true), .text("email", required: true), .text("previous_hash", required: true), .text("document_hash", required: true), .json("signatures", .arrayOfStrings), .text("sessionid", required: true), .text("documentid")])
        /// `POST /opendocument/`: a document's history.
        public static let openDocument = Endpoint<FormBody, SignToLoginAnswer>(.post, Path.openDocument, access: .anyone)
            .operation("signatureOpenDocument", "A document's signing history (the spec's /opendocument/)", tags: "Sign To Login")
            .form([.json, .urlencoded, .multipart], [.text("apikey", required: true), .text("email", required: true), .text("documentid", required: true), .text("document_hash", required: true)])
        /// `GET /signature-photos/{id}`: the photo taken at a signing.
        public static let photo = Endpoint<NoContent, RawBody>(.get, Path.photos + "{id}", access: .anyone)
            .operation("signaturePhoto", "The photo taken with a signing", tags: "Sign To Login")
            .errors([404: []], format: .signToLogin)
        /// `GET /documents/?documentid=…`: a document's history page (the signed PDF's link).
        public static let history = Endpoint<NoContent, RawBody>(.get, Path.history, access: .anyone, query: [QueryParameter("documentid", .text)])
            .operation("signatureHistoryPage", "A document's signing history (HTML)", tags: "Sign To Login")
            .errors([404: []], format: .page)

        /// Every operation of the spec's endpoints.
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

    /// Whether `text` is a time or a date the spec's way: `DD.MM.YYYY HH:MM:SS` or `DD.MM.YYYY`, a
    /// day that exists, hours 00–23, minutes and seconds 00–59. (Read by hand: a `DateFormatter`
    /// made per call cost more than the rest of an `/authenticate/`.)
    public static func isSpecTime(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10 || bytes.count == 19 else { return false }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<(from + count) {
                guard bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(bytes[i] - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[2] == UInt8(ascii: "."), bytes[5] == UInt8(ascii: "."),
              let day = number(0, 2), let month = number(3, 2), let year = number(6, 4), (1...12).contains(month), year >= 1 else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...days).contains(day) else { return false }
        guard bytes.count == 19 else { return true }
        guard bytes[10] == UInt8(ascii: " "), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2) else { return false }
        return hour < 24 && minute < 60 && second < 60
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
