import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseSignature
import Crypto

/// The PDFs in the app's Documents folder (figure 7). A PDF opened from elsewhere (mail, Files)
/// is copied in first, under a name of its own.
@MainActor
public final class DocumentsViewModel: ScreenModel<DocumentsViewModel.State> {
    /// A PDF of the folder.
    public struct Item: Equatable, Sendable {
        /// The name shown.
        public var name: String
        /// Where it is.
        public var url: URL
        /// Its size in bytes.
        public var size: Int
        /// When it last changed.
        public var modified: Date
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The items, in the order shown.
        public var items: [Item] = []
        /// What an empty list says.
        public var emptyMessage: String
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A notice shown over the list until the person dismisses it (the spec's alert "Образец
        /// создан" after an enrolment): on iOS a `UIAlertController` with `noticeButton`.
        public var notice: String?
        /// The notice's button.
        public var noticeButton: String
    }

    /// Hands something to open to the app.
    public var onOpen: ((URL) -> Void)?
    private let environment: SignToLoginEnvironment

    /// The documents of `environment`'s folder; `notice` shows over them until dismissed.
    public init(environment: SignToLoginEnvironment, notice: String? = nil) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("stl.documents.title"), emptyMessage: l("stl.documents.empty"), notice: notice, noticeButton: l("stl.documents.ok")))
        reload()
    }

    /// The notice's button: the alert goes.
    public func dismissNotice() { update { $0.notice = nil } }

    /// Reads the folder again, newest first.
    public func reload() {
        let folder = environment.documentsFolder
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let urls = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])) ?? []
        let items = urls.filter { $0.pathExtension.lowercased() == "pdf" }.map { url in
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey])
            return Item(name: url.lastPathComponent, url: url, size: values?.fileSize ?? 0, modified: values?.contentModificationDate ?? .distantPast)
        }
        update { $0.items = items.sorted { ($0.modified, $0.name) > ($1.modified, $1.name) } }
    }

    /// A PDF opened from another app: copied into the folder (a free name if taken) and opened.
    @discardableResult
    public func importDocument(from url: URL) -> URL? {
        let folder = environment.documentsFolder
        do {
            let data = try Data(contentsOf: url)
            guard data.starts(with: Data("%PDF-".utf8)) || String(decoding: data.prefix(1024), as: UTF8.self).contains("%PDF-") else {
                update { $0.errorMessage = environment.localizer("stl.documents.notPDF") }
                return nil
            }
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let base = url.deletingPathExtension().lastPathComponent
            var target = folder.appendingPathComponent("\(base).pdf")
            var index = 2
            while FileManager.default.fileExists(atPath: target.path) {
                target = folder.appendingPathComponent("\(base) \(index).pdf")
                index += 1
            }
            try data.write(to: target, options: .atomic)
            reload()
            onOpen?(target)
            return target
        } catch {
            update { $0.errorMessage = environment.localizer("stl.documents.importFailed") }
            return nil
        }
    }

    /// Opens a document in the viewer.
    public func open(_ item: Item) { onOpen?(item.url) }
}

/// One signing of a document's history, as the screens show it.
public struct HistoryRow: Equatable, Sendable {
    /// The name shown.
    public var name: String
    /// "91%".
    public var similarity: String
    /// Below the server's threshold: shown as a warning.
    public var isLowMatch: Bool
    /// When they signed (the spec's `DD.MM.YYYY HH:MM:SS`).
    public var time: String
    /// Where they signed, when the device told it.
    public var place: String?
    /// The photo taken when they signed, if any.
    public var photoURL: URL?
    /// The signature's id.
    public var signatureID: String

    init(_ entry: DocumentHistoryEntry, localizer: Localizer) {
        name = entry.name ?? localizer("stl.history.unknownSigner")
        similarity = "\(Int((entry.similarity * 100).rounded()))%"
        isLowMatch = entry.warning
        time = entry.time
        place = [entry.city, entry.country, entry.address].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ").nilIfEmpty
        photoURL = entry.photo.flatMap(URL.init(string:))
        signatureID = entry.signatureID
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

/// A document's signing history (figure 9): one row per signature, low matches marked. Opened
/// from the viewer's "History", or by the deep link `stl://user/?documentid=…` the history page
/// sends an iPhone to.
@MainActor
public final class SigningHistoryViewModel: ScreenModel<SigningHistoryViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The document's id.
        public var documentID: String
        /// The rows, in the order shown.
        public var rows: [HistoryRow] = []
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// What an empty list says.
        public var emptyMessage: String
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// The same history on the web (to share).
        public var webURL: URL
    }

    private let environment: SignToLoginEnvironment
    private let email: String

    /// The history of `documentID`, starting from `entries` (the viewer's copy).
    public init(environment: SignToLoginEnvironment, email: String, documentID: String, entries: [DocumentHistoryEntry]? = nil) {
        self.environment = environment
        self.email = email
        let l = environment.localizer
        super.init(state: State(title: l("stl.history.title"), documentID: documentID,
                                rows: (entries ?? []).map { HistoryRow($0, localizer: l) }, emptyMessage: l("stl.history.empty"),
                                webURL: environment.client.historyURL(documentID: documentID)))
    }

    /// The view model a deep link (or a history page URL) opens, nil for any other link.
    public static func opening(_ url: URL, environment: SignToLoginEnvironment, email: String) -> SigningHistoryViewModel? {
        SignToLoginAPI.documentID(from: url).map { SigningHistoryViewModel(environment: environment, email: email, documentID: $0) }
    }

    /// Loads the history. Without the file at hand there is no hash to compare, so whether the
    /// file changed is not asked here (the viewer does that); the history is the same either way.
    public func load() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            switch try await environment.client.openDocument(email: email, documentID: state.documentID, documentHash: "-") {
            case .current(let history), .changedOutside(let history):
                let l = environment.localizer
                update { $0.isLoading = false; $0.rows = history.map { HistoryRow($0, localizer: l) } }
            case .notFound, .unknownUser:
                update { $0.isLoading = false; $0.errorMessage = environment.localizer("stl.history.notFound") }
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }
}

/// What "Send by email" hands the platform's mail composer: sending is the platform's.
public struct DocumentEmail: Equatable, Sendable {
    /// Whom to send it to (the person may add more in the composer).
    public var recipients: [String]
    /// The subject.
    public var subject: String
    /// The text.
    public var body: String
    /// The signed PDF.
    public var attachment: URL
    /// The attachment's type.
    public var mimeType = "application/pdf"

    /// The whole message (RFC 5322 with MIME, RFC 2045–2047 and 2231): `From`, `To`, `Subject`
    /// (encoded words when not ASCII), `Date`, `Message-ID`, a UTF-8 text part and the signed PDF
    /// as a base64 attachment, with CRLF line ends. What a mail client opens as an `.eml` file, and
    /// what a platform without a composer (or a share sheet) sends; on iOS the same subject, body
    /// and attachment go to `MFMailComposeViewController` instead.
    public func message(from sender: String, date: Date = Date()) throws -> Data {
        let pdf = try Data(contentsOf: attachment)
        let boundary = "gatehouse-" + UUID().uuidString
        let name = attachment.lastPathComponent
        var lines: [String] = []
        lines.append("From: " + sender)
        if !recipients.isEmpty { lines.append("To: " + recipients.joined(separator: ", ")) }
        lines.append("Subject: " + Self.encodedWords(subject))
        lines.append("Date: " + Self.rfc5322Date(date))
        lines.append("Message-ID: <\(UUID().uuidString.lowercased())@\(sender.split(separator: "@").last.map(String.init) ?? "localhost")>")
        lines.append("MIME-Version: 1.0")
        lines.append("Content-Type: multipart/mixed; boundary=\"\(boundary)\"")
        lines.append("")
        lines.append("--" + boundary)
        lines.append("Content-Type: text/plain; charset=utf-8")
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines += Self.base64Lines(Data(body.utf8))
        lines.append("--" + boundary)
        let quotedName = name.allSatisfy { $0.isASCII && $0 != "\"" && $0 != "\\" } ? "\"\(name)\"" : "\"document.pdf\""
        lines.append("Content-Type: \(mimeType); name=\(quotedName)")
        lines.append("Content-Transfer-Encoding: base64")
        // RFC 2231: the real name in UTF-8, beside a plain one for old readers.
        let encodedName = name.addingPercentEncoding(withAllowedCharacters: Self.attributeCharacters) ?? "document.pdf"
        lines.append("Content-Disposition: attachment; filename=\(quotedName); filename*=UTF-8''\(encodedName)")
        lines.append("")
        lines += Self.base64Lines(pdf)
        lines.append("--" + boundary + "--")
        lines.append("")
        return Data(lines.joined(separator: "\r\n").utf8)
    }

    /// RFC 2231's attribute characters (what may stand unescaped in `filename*`).
    private static let attributeCharacters = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&+-.^_`|~")

    /// A header's text: as is when ASCII, else RFC 2047 encoded words (UTF-8, base64) of at most 75 characters each.
    static func encodedWords(_ text: String) -> String {
        if text.allSatisfy({ $0.isASCII && $0 != "\r" && $0 != "\n" }) { return text }
        var words: [String] = [], chunk = ""
        for character in text {
            let candidate = chunk + String(character)
            if Data(candidate.utf8).base64EncodedString().count > 75 - 12, !chunk.isEmpty {
                words.append(chunk)
                chunk = String(character)
            } else {
                chunk = candidate
            }
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    static func base64Lines(_ data: Data) -> [String] {
        let text = data.base64EncodedString()
        return stride(from: 0, to: text.count, by: 76).map { start in
            let from = text.index(text.startIndex, offsetBy: start)
            return String(text[from..<(text.index(from, offsetBy: 76, limitedBy: text.endIndex) ?? text.endIndex)])
        }
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}

/// The document viewer (figure 8): the pages, "Sign" (draw → the server scores it → the stamp
/// placed, then moved, resized or deleted on its page), "Save" (the PDF signed by incremental
/// update, its hash recorded with `/savedocument/`), "History", "Send by email"; on opening, the
/// warning when the file changed outside the app since its last signing and the signers whose
/// signature matched poorly.
@MainActor
public final class DocumentViewerViewModel: ScreenModel<DocumentViewerViewModel.State> {
    /// A page as shown: its size in points after the crop box and the rotation.
    public struct PageSize: Equatable, Sendable {
        /// Points across.
        public var width: Double
        /// Points down.
        public var height: Double
        /// A page of `width` × `height` points.
        public init(width: Double, height: Double) {
            self.width = width
            self.height = height
        }
    }

    /// The stamp being placed: its page and its rectangle in that page's shown coordinates
    /// (points, origin top left, as the view draws the page).
    public struct Placement: Equatable, Sendable {
        /// The page it is on (from 0).
        public var page: Int
        /// From the page's left, in points.
        public var x: Double
        /// From the page's top, in points.
        public var y: Double
        /// Its width, in points.
        public var width: Double
        /// Its height, in points.
        public var height: Double
        /// How alike the signature was ("91%").
        public var similarity: String
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The pages as shown.
        public var pages: [PageSize] = []
        /// The document's id once it is registered (its link carries it).
        public var documentID: String?
        /// Who signed it, in order.
        public var history: [HistoryRow] = []
        /// The spec's warning: the file is not the version its last signer saved.
        public var changedOutsideWarning: String?
        /// The signers whose signature matched poorly.
        public var lowMatchWarning: String?
        /// The stamp being placed, if any.
        public var placement: Placement?
        /// The "sign" button's title.
        public var signTitle: String
        /// The "save" button's title.
        public var saveTitle: String
        /// The "delete" button's title.
        public var deleteTitle: String
        /// The "history" button's title.
        public var historyTitle: String
        /// The "Send by email" button's title.
        public var emailTitle: String
        /// Whether "sign" works now.
        public var isSignEnabled = false
        /// Whether "save" works now.
        public var isSaveEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice (what the last step did).
        public var infoMessage: String?
    }

    /// Shows the history screen (the flow sets it).
    public var onShowHistory: ((SigningHistoryViewModel) -> Void)?
    /// The file.
    public let url: URL
    private let environment: SignToLoginEnvironment
    private let email: String
    private var data = Data()
    private var document: PDFDocument?
    private var signature: AuthenticateViewModel.Result?
    private var photo: Data?
    private var entries: [DocumentHistoryEntry] = []

    /// The viewer of `url` for `email`, the person signed in.
    public init(environment: SignToLoginEnvironment, email: String, url: URL) {
        self.environment = environment
        self.email = email
        self.url = url
        let l = environment.localizer
        super.init(state: State(title: url.deletingPathExtension().lastPathComponent, signTitle: l("stl.viewer.sign"), saveTitle: l("stl.viewer.save"),
                                deleteTitle: l("stl.viewer.delete"), historyTitle: l("stl.viewer.history"), emailTitle: l("stl.viewer.email")))
    }

    static func sha256(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    /// Reads the file, and asks the server about it when it carries a history link.
    public func open() async {
        let l = environment.localizer
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            data = try Data(contentsOf: url)
            let document = try PDFDocument(data: data)
            self.document = document
            let pages = try document.pages().map { page -> PageSize in
                page.rotation % 180 == 0 ? PageSize(width: page.cropBox.width, height: page.cropBox.height)
                    : PageSize(width: page.cropBox.height, height: page.cropBox.width)
            }
            // Our stamps' links: the history page on this app's server (a link to another server's
            // page that happens to look alike is not ours).
            let server = environment.client.server
            let documentID = try document.linkURIs().flatMap { $0 }.compactMap { URL(string: $0) }
                .filter { $0.host == server.host && $0.port == server.port }
                .compactMap(SignToLoginAPI.documentID(from:)).last
            update { $0.pages = pages; $0.documentID = documentID; $0.isSignEnabled = true }
            if let documentID { try await refreshHistory(documentID: documentID, hash: Self.sha256(data)) }
            update { $0.isLoading = false }
        } catch PDFError.encrypted {
            update { $0.isLoading = false; $0.errorMessage = l("stl.viewer.encrypted") }
        } catch let error as PDFError {
            update { $0.isLoading = false; $0.errorMessage = l("stl.viewer.unreadable", error.description) }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    private func refreshHistory(documentID: String, hash: String) async throws {
        let l = environment.localizer
        let opened = try await environment.client.openDocument(email: email, documentID: documentID, documentHash: hash)
        var history: [DocumentHistoryEntry] = []
        var changed = false
        switch opened {
        case .current(let entries): history = entries
        case .changedOutside(let entries): history = entries; changed = true
        case .notFound, .unknownUser: break
        }
        entries = history
        let low = history.filter(\.warning).map { $0.name ?? l("stl.history.unknownSigner") }
        update {
            $0.history = history.map { HistoryRow($0, localizer: l) }
            $0.changedOutsideWarning = changed ? l("stl.viewer.changedOutside") : nil
            $0.lowMatchWarning = low.isEmpty ? nil : l("stl.viewer.lowMatch", low.joined(separator: ", "))
        }
    }

    /// "Sign": the screen to draw on (it always goes on; the score is kept for later readers). The
    /// photo taken when signing (``setPhoto(_:)`` here, or `photo` on the returned screen) goes
    /// with the signature to the server, which keeps it as the evidence of who signed (in the
    /// document's history and on its page), and onto the stamp.
    public func sign() -> AuthenticateViewModel {
        let model = AuthenticateViewModel(environment: environment, email: email, requiresMatch: false)
        model.photo = photo
        signing = model
        model.onOutcome = { [weak self, weak model] outcome in
            guard let self else { return }
            if let taken = model?.photo { photo = taken }
            if case .authenticated(let result) = outcome { place(result) }
        }
        return model
    }

    /// The signing screen open now, if any (the photo set meanwhile goes to it too).
    private weak var signing: AuthenticateViewModel?

    /// Attaches the photo taken when signing: kept by the server with the signature (any of PNG, JPEG,
    /// GIF or WebP), and drawn beside the signature on the stamp when it is a JPEG.
    public func setPhoto(_ jpeg: Data?) {
        photo = jpeg
        signing?.photo = jpeg
    }

    /// Puts a scored signature on the page (the last page, bottom right, at a third of its width).
    func place(_ result: AuthenticateViewModel.Result) {
        signature = result
        guard let last = state.pages.indices.last else { return }
        let page = state.pages[last]
        let width = page.width / 3, height = width * result.ink.height / result.ink.width
        update {
            $0.placement = Placement(page: last, x: page.width - width - 24, y: page.height - height - 24, width: width, height: height,
                                     similarity: "\(Int((result.similarity * 100).rounded()))%")
            $0.isSaveEnabled = true
        }
    }

    /// Moves the stamp by a drag, kept on its page.
    public func move(dx: Double, dy: Double) {
        guard var placement = state.placement else { return }
        let page = state.pages[placement.page]
        placement.x = min(max(0, placement.x + dx), page.width - placement.width)
        placement.y = min(max(0, placement.y + dy), page.height - placement.height)
        update { $0.placement = placement }
    }

    /// Resizes the stamp (a pinch), keeping its proportions, between 40 points wide and the page.
    public func resize(scale: Double) {
        guard var placement = state.placement, scale > 0 else { return }
        let page = state.pages[placement.page]
        let ratio = placement.height / placement.width
        var width = min(max(40, placement.width * scale), page.width)
        if width * ratio > page.height { width = page.height / ratio }
        placement.width = width
        placement.height = width * ratio
        placement.x = min(max(0, placement.x), page.width - placement.width)
        placement.y = min(max(0, placement.y), page.height - placement.height)
        update { $0.placement = placement }
    }

    /// Puts the stamp at a rectangle of a page's shown coordinates (a drag and a pinch in one;
    /// kept on the page).
    public func setPlacement(page index: Int, x: Double, y: Double, width: Double) {
        guard var placement = state.placement, state.pages.indices.contains(index) else { return }
        placement.page = index
        update { $0.placement = placement }
        resize(scale: width / placement.width)
        guard let sized = state.placement else { return }
        move(dx: x - sized.x, dy: y - sized.y)
    }

    /// Moves the stamp to another page.
    public func moveToPage(_ index: Int) {
        guard var placement = state.placement, state.pages.indices.contains(index) else { return }
        let page = state.pages[index]
        placement.page = index
        placement.width = min(placement.width, page.width)
        placement.height = min(placement.height, page.height)
        placement.x = min(placement.x, page.width - placement.width)
        placement.y = min(placement.y, page.height - placement.height)
        update { $0.placement = placement }
    }

    /// "Delete": takes the stamp off the page (nothing was saved).
    public func deletePlacement() {
        signature = nil
        update { $0.placement = nil; $0.isSaveEnabled = false }
    }

    /// The placement in the page's user space (what the PDF writer takes).
    public func userSpaceRect(of placement: Placement) throws -> PDFRect {
        guard let document else { throw PDFError.malformed("not open") }
        let page = try document.pages()[placement.page]
        let crop = page.cropBox
        let shown = state.pages[placement.page]
        func user(_ sx: Double, _ sy: Double) -> (Double, Double) {
            let up = shown.height - sy
            switch page.rotation {
            case 90: return (crop.x + crop.width - up, crop.y + sx)
            case 180: return (crop.x + crop.width - sx, crop.y + crop.height - up)
            case 270: return (crop.x + up, crop.y + crop.height - sx)
            default: return (crop.x + sx, crop.y + up)
            }
        }
        let a = user(placement.x, placement.y), b = user(placement.x + placement.width, placement.y + placement.height)
        return PDFRect(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(b.0 - a.0), height: abs(b.1 - a.1))
    }

    /// "Save": registers a new document first (the spec's first save has no signatures), signs the
    /// file by an incremental update with the link to its history, writes it, and records its hash.
    public func save() async {
        guard let placement = state.placement, let signature, state.isSaveEnabled else { return }
        let l = environment.localizer
        update { $0.isLoading = true; $0.isSaveEnabled = false; $0.errorMessage = nil }
        do {
            let before = Self.sha256(data)
            var documentID = state.documentID
            if documentID == nil {
                switch try await environment.client.saveDocument(email: email, documentHash: before, previousHash: nil, signatureIDs: []) {
                case .saved(let id): documentID = id
                case .conflict, .unknownUser: throw SignToLoginError.invalidInput(message: l("stl.viewer.saveFailed"))
                }
                // Kept at once: a save that fails after this retries on the same document.
                update { $0.documentID = documentID }
            }
            guard let documentID else { return }
            // The stamp embeds a JPEG as it is (PDF's DCTDecode); another image type goes to the server only.
            let stamp = SignatureStamp(ink: signature.ink, photoJPEG: photo.flatMap { $0.starts(with: [0xFF, 0xD8, 0xFF]) ? $0 : nil },
                                       link: environment.client.historyURL(documentID: documentID).absoluteString)
            let signed = try PDFSigner.sign(data, page: placement.page, rect: try userSpaceRect(of: placement), stamp: stamp)
            let after = Self.sha256(signed)
            switch try await environment.client.saveDocument(email: email, documentHash: after, previousHash: before, signatureIDs: [signature.signatureID],
                                                             documentID: documentID) {
            case .saved:
                try signed.write(to: url, options: .atomic)
                data = signed
                document = try PDFDocument(data: signed)
                self.signature = nil
                update { $0.placement = nil; $0.documentID = documentID; $0.infoMessage = l("stl.viewer.saved", url.lastPathComponent) }
                try await refreshHistory(documentID: documentID, hash: after)
            case .conflict:
                update { $0.errorMessage = l("stl.viewer.conflict"); $0.isSaveEnabled = true }
            case .unknownUser:
                update { $0.errorMessage = l("stl.login.unknown", email) }
            }
        } catch {
            update { $0.errorMessage = environment.message(for: error); $0.isSaveEnabled = true }
        }
        update { $0.isLoading = false }
    }

    /// "History".
    public func showHistory() {
        guard let documentID = state.documentID else { return }
        let model = SigningHistoryViewModel(environment: environment, email: email, documentID: documentID, entries: entries)
        onShowHistory?(model)
    }

    /// "Send by email": what the platform's composer needs (subject, body and the signed PDF, in
    /// the person's language); ``emailMessage(to:date:)`` is the same as one complete message.
    public func emailDraft(to recipients: [String] = []) -> DocumentEmail {
        let l = environment.localizer
        var body = l("stl.email.body", state.title)
        if let documentID = state.documentID { body += "\n\n" + l("stl.email.history", environment.client.historyURL(documentID: documentID).absoluteString) }
        return DocumentEmail(recipients: recipients, subject: l("stl.email.subject", state.title), body: body, attachment: url)
    }

    /// "Send by email" as a complete RFC 5322 message from the signed-in person: an `.eml` file to
    /// share or save, or what a platform without a composer sends.
    public func emailMessage(to recipients: [String] = [], date: Date = Date()) throws -> Data {
        try emailDraft(to: recipients).message(from: email, date: date)
    }
}
