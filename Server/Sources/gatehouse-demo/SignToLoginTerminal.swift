import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens
import GatehouseSignature

/// Draws `SignToLoginFlow`'s screens as text and forwards what is chosen to their view models.
/// The terminal has no touch screen: "Draw my signature" moves a finger along the person's
/// signature (a curve seeded by the email, a little different each time, as a hand is) and feeds
/// the touches to the pad, and the pad's ink is drawn as characters. Nothing is decided here.
@MainActor
final class SignToLoginTerminal: TerminalMenu {
    let flow: SignToLoginFlow
    let outbox: DevOutboxClient
    private var strokes = 0

    init(flow: SignToLoginFlow, outbox: DevOutboxClient, language: String) {
        self.flow = flow
        self.outbox = outbox
        super.init(language: language)
    }

    func run() async {
        await flow.start()
        while !quit {
            switch flow.state.screen {
            case .splash: await flow.start()
            case .start(let message): await showStart(message)
            case .profile(let vm): await show(vm)
            case .enrolment(let vm): await show(vm)
            case .signIn(let vm): await show(vm)
            case .authenticate(let vm): await show(vm)
            case .documents(let vm): await show(vm)
            case .viewer(let vm): await show(vm)
            case .history(let vm): await show(vm)
            }
        }
    }

    // MARK: The finger and the ink

    /// Touches along a signature: the person's own (seeded by `who`), theirs in a hurry (the
    /// shape bent: a match between the signing floor and the threshold, a low-match signing), or a stranger's.
    func drawSignature(on pad: SignaturePadModel, who: String, stranger: Bool = false, hurried: Bool = false) {
        strokes += 1
        var seed = UInt64(truncatingIfNeeded: who.unicodeScalars.reduce(5381) { ($0 << 5) &+ $0 &+ Int($1.value) })
        let shape = Double(seed % 1000) / 1000
        // Each drawing differs, in this run and the next (a hand never draws the same points twice,
        // and the server refuses a copy of points it has seen).
        seed = seed &+ (UInt64(strokes) &+ UInt64.random(in: 0...UInt64.max)) &* 0x9E3779B97F4A7C15
        func jitter() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53) - 0.5
        }
        let count = 115 + Int((jitter() + 0.5) * 15)
        // A hand's shape differs a little each time (the server refuses a copy of points it has seen).
        let (a, b, p, q) = (1 + jitter() * 0.08, 1 + jitter() * 0.08, jitter() * 0.12, jitter() * 0.12)
        let h = hurried ? 0.33 : 0
        for i in 0..<count {
            let t = Double(i) / Double(count) * 2 * .pi
            let x = stranger ? 40 * a * cos(3 * t + p) + 30 * t : 60 * a * cos(t + p) + 25 * (1 + h) * sin((2 + shape) * t) + 20 * t
            let y = stranger ? 35 * b * sin(2 * t + q) : 40 * b * sin((1.5 + shape / 2) * t + q + h) + 10 * (1 - h) * cos(4 * t)
            let (px, py) = (120 + x + jitter(), 120 + y + jitter())
            if i == 0 { pad.begin(x: px, y: py, time: 0) } else { pad.move(x: px, y: py, time: Double(i) / 60) }
        }
        pad.end()
    }

    /// Touches from a point file: a JSON array of `[x, y]` pairs or `{"x":…, "y":…}` objects, one
    /// touch per 1/60 s (how a phone samples a finger).
    static func points(file: String) -> [(Double, Double)]? {
        guard let data = FileManager.default.contents(atPath: file),
              let items = try? JSONSerialization.jsonObject(with: data) as? [Any] else { return nil }
        let points = items.compactMap { item -> (Double, Double)? in
            if let pair = item as? [NSNumber], pair.count == 2 { return (pair[0].doubleValue, pair[1].doubleValue) }
            if let object = item as? [String: Any], let x = (object["x"] as? NSNumber)?.doubleValue, let y = (object["y"] as? NSNumber)?.doubleValue { return (x, y) }
            return nil
        }
        return points.count == items.count && !points.isEmpty ? points : nil
    }

    static func feed(_ points: [(Double, Double)], to pad: SignaturePadModel) {
        for (index, point) in points.enumerated() {
            if index == 0 { pad.begin(x: point.0, y: point.1, time: 0) } else { pad.move(x: point.0, y: point.1, time: Double(index) / 60) }
        }
        pad.end()
    }

    /// A scribble too short to be a signature.
    func drawScribble(on pad: SignaturePadModel) {
        pad.begin(x: 100, y: 100, time: 0)
        for i in 1...5 { pad.move(x: 100 + Double(i), y: 100, time: Double(i) / 60) }
        pad.end()
    }

    /// The pad's ink as characters: `#` where a polygon covers a cell's centre.
    func render(_ ink: SignatureInk, columns: Int = 64, rows: Int = 12) {
        let points = ink.polygons.flatMap { $0 }
        guard !points.isEmpty else {
            Terminal.line("  ┌" + String(repeating: "─", count: columns) + "┐")
            for _ in 0..<rows / 2 { Terminal.line("  │" + String(repeating: " ", count: columns) + "│") }
            Terminal.line("  └" + String(repeating: "─", count: columns) + "┘")
            return
        }
        let minX = points.map(\.x).min()!, maxX = points.map(\.x).max()!, minY = points.map(\.y).min()!, maxY = points.map(\.y).max()!
        let sx = max(maxX - minX, 1) / Double(columns), sy = max(maxY - minY, 1) / Double(rows)
        Terminal.line("  ┌" + String(repeating: "─", count: columns) + "┐ " + (ink.color == .blue ? t("blue pen", "синее перо") : t("black pen", "чёрное перо")))
        for row in 0..<rows {
            var line = ""
            for column in 0..<columns {
                let x0 = minX + Double(column) * sx, y0 = minY + Double(row) * sy
                let covered = [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75), (0.5, 0.5)].contains { ink.covers(x: x0 + $0.0 * sx, y: y0 + $0.1 * sy) }
                line += covered ? "#" : " "
            }
            Terminal.line("  │" + line + "│")
        }
        Terminal.line("  └" + String(repeating: "─", count: columns) + "┘")
    }

    private func padOptions(_ pad: SignaturePadModel, who: String) -> [Option] {
        [
            Option(label: t("Draw my signature", "Нарисовать мою подпись")) { [self] in drawSignature(on: pad, who: who) },
            Option(label: t("Draw my signature in a hurry", "Нарисовать мою подпись наспех")) { [self] in drawSignature(on: pad, who: who, hurried: true) },
            Option(label: t("Draw someone else's signature", "Нарисовать чужую подпись")) { [self] in drawSignature(on: pad, who: who, stranger: true) },
            Option(label: t("Draw a short scribble", "Нарисовать короткий росчерк")) { [self] in drawScribble(on: pad) },
            Option(label: t("Draw from a point file", "Нарисовать из файла точек")) { [self] in
                guard let path = read(t("Point file", "Файл точек")), !path.isEmpty else { return }
                if let points = Self.points(file: path) { Self.feed(points, to: pad) } else { Terminal.line(t("  Not a point file.", "  Это не файл точек.")) }
            },
            Option(label: pad.state.undoTitle, enabled: !pad.state.isEmpty) { pad.undo() },
            Option(label: pad.state.clearTitle, enabled: !pad.state.isEmpty) { pad.clear() },
            Option(label: pad.state.colorTitles[pad.state.color == .blue ? .black : .blue] ?? "") {
                pad.setColor(pad.state.color == .blue ? .black : .blue)
            },
        ]
    }

    // MARK: Screens

    private func showStart(_ message: String?) async {
        header(flow.state.startTitle)
        notices(error: message)
        await menu([
            Option(label: flow.state.registerTitle) { [self] in flow.register() },
            Option(label: flow.state.loginTitle) { [self] in flow.logIn() },
        ])
    }

    private func show(_ vm: ProfileFormViewModel) async {
        header(vm.state.title)
        for field in vm.state.fields { self.field(field.label + (field.isRequired ? " *" : ""), field.value, error: field.error) }
        field(vm.state.photoTitle, vm.state.photo.map { t("\($0.count) bytes picked", "выбрано \($0.count) байт") } ?? "—")
        await menu([
            Option(label: t("Fill in the form", "Заполнить форму")) { [self] in
                for field in vm.state.fields {
                    guard let value = read(field.label, current: field.value) else { return }
                    vm.set(field.field, value)
                }
            },
            // A terminal has no photo library: the picture is a file.
            Option(label: t("Pick a profile picture (an image file)", "Выбрать фото профиля (файл изображения)")) { [self] in
                guard let path = read(t("Image file", "Файл изображения")), !path.isEmpty else { return }
                guard let data = FileManager.default.contents(atPath: path) else { return Terminal.line(t("  Cannot read it.", "  Не удаётся прочитать.")) }
                vm.setPhoto(data)
            },
            Option(label: vm.state.nextTitle, enabled: vm.state.isNextEnabled) { vm.next() },
            Option(label: t("Back", "Назад")) { vm.back() },
        ])
    }

    private func show(_ vm: EnrolmentViewModel) async {
        header(vm.state.title)
        Terminal.line("  \(vm.state.counter)")
        render(vm.pad.state.ink)
        if vm.state.isAskingForCode { field(vm.state.codeLabel, vm.state.code) }
        notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
        if vm.state.isAskingForCode {
            await menu([
                Option(label: t("Type the code", "Ввести код")) { [self] in if let code = read(vm.state.codeLabel) { vm.setCode(code) } },
                Option(label: t("Fetch the code from the server's development outbox (stands in for the mailbox)",
                                "Взять код из dev-outbox сервера (вместо почтового ящика)")) { [self] in
                    await fetchCode(from: outbox, to: vm.email, label: vm.state.codeLabel) { vm.setCode($0) }
                },
                Option(label: t("Send", "Отправить"), enabled: vm.state.code.count == 6) { await vm.submitCode() },
                Option(label: vm.state.cancelTitle) { vm.cancel() },
            ])
            return
        }
        await menu(padOptions(vm.pad, who: vm.email) + [
            Option(label: vm.state.acceptTitle, enabled: vm.state.isAcceptEnabled) { await vm.accept() },
            Option(label: vm.state.cancelTitle) { vm.cancel() },
        ])
    }

    private func show(_ vm: SignInViewModel) async {
        header(vm.state.title)
        field(vm.state.emailLabel, vm.state.email)
        notices(error: vm.state.errorMessage)
        await menu([
            Option(label: t("Type the email", "Ввести почту")) { [self] in if let email = read(vm.state.emailLabel, current: vm.state.email) { vm.setEmail(email) } },
            Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() },
        ])
    }

    /// The signature screen, signing in or signing a document.
    private func show(_ vm: AuthenticateViewModel) async {
        header(vm.state.title)
        render(vm.pad.state.ink)
        if let text = vm.state.similarityText { Terminal.line("  \(text)") }
        notices(error: vm.state.errorMessage)
        var options = padOptions(vm.pad, who: vm.email)
        options.append(Option(label: vm.state.submitTitle, enabled: vm.state.isSubmitEnabled) { await vm.submit() })
        await menu(options)
    }

    private func show(_ vm: DocumentsViewModel) async {
        vm.reload()
        header(vm.state.title)
        // The alert over the list (the spec's "Образец создан"): it stays until its button.
        if let notice = vm.state.notice {
            Terminal.line("  ┌ \(notice)")
            await menu([Option(label: vm.state.noticeButton) { vm.dismissNotice() }])
            return
        }
        if vm.state.items.isEmpty { Terminal.line("  \(vm.state.emptyMessage)") }
        for (index, item) in vm.state.items.enumerated() { Terminal.line("  [\(index + 1)] \(item.name)  \(item.size) B") }
        notices(error: vm.state.errorMessage)
        var options = vm.state.items.map { item in Option(label: t("Open ", "Открыть ") + item.name) { vm.open(item) } }
        options.append(Option(label: t("Open a PDF from elsewhere (a path)", "Открыть PDF извне (путь)")) { [self] in
            if let path = read(t("Path", "Путь")), !path.isEmpty { vm.importDocument(from: URL(fileURLWithPath: path)) }
        })
        options.append(Option(label: t("Open a link (stl://…)", "Открыть ссылку (stl://…)")) { [self] in
            if let link = read(t("Link", "Ссылка")), let url = URL(string: link), !flow.openLink(url) {
                Terminal.line(t("  Not a Sign To Login link.", "  Это не ссылка Sign To Login."))
            }
        })
        options.append(Option(label: t("Log out", "Выйти")) { [self] in flow.logOut() })
        await menu(options)
    }

    private func show(_ vm: DocumentViewerViewModel) async {
        if vm.state.pages.isEmpty, vm.state.errorMessage == nil { await vm.open() }
        header(vm.state.title)
        for (index, page) in vm.state.pages.enumerated() {
            Terminal.line(t("  Page \(index + 1): ", "  Страница \(index + 1): ") + "\(Int(page.width))×\(Int(page.height)) " + t("pt", "пт"))
        }
        Terminal.line(t("  File: ", "  Файл: ") + vm.url.path)
        if let id = vm.state.documentID { Terminal.line("  documentid: \(id)") }
        for row in vm.state.history { Terminal.line("  ✎ \(row.name)  \(row.similarity)\(row.isLowMatch ? " ⚠" : "")  \(row.time)\(row.photoURL != nil ? "  📷" : "")") }
        if let warning = vm.state.changedOutsideWarning { Terminal.line("  ⚠ \(warning)") }
        if let warning = vm.state.lowMatchWarning { Terminal.line("  ⚠ \(warning)") }
        if let p = vm.state.placement {
            Terminal.line(t("  Signature on page \(p.page + 1) at ", "  Подпись на странице \(p.page + 1) в ")
                + "x \(Int(p.x)), y \(Int(p.y)), \(Int(p.width))×\(Int(p.height)) (\(p.similarity))")
        }
        notices(error: vm.state.errorMessage, info: vm.state.infoMessage)
        let placed = vm.state.placement != nil
        await menu([
            Option(label: vm.state.signTitle, enabled: vm.state.isSignEnabled && !placed) { [self] in
                let signing = vm.sign()
                while !quit, vm.state.placement == nil {
                    await show(signing)
                    if signing.state.errorMessage != nil { break }
                }
            },
            Option(label: t("Move the signature (dx dy, points)", "Передвинуть подпись (dx dy, пункты)"), enabled: placed) { [self] in
                let parts = (read("dx dy") ?? "").split(separator: " ").compactMap { Double($0) }
                if parts.count == 2 { vm.move(dx: parts[0], dy: parts[1]) }
            },
            Option(label: t("Resize the signature (a factor)", "Изменить размер подписи (множитель)"), enabled: placed) { [self] in
                if let factor = read(t("Factor", "Множитель")).flatMap(Double.init) { vm.resize(scale: factor) }
            },
            Option(label: vm.state.deleteTitle, enabled: placed) { vm.deletePlacement() },
            Option(label: vm.state.saveTitle, enabled: vm.state.isSaveEnabled) { await vm.save() },
            Option(label: vm.state.historyTitle, enabled: vm.state.documentID != nil) { vm.showHistory() },
            Option(label: vm.state.emailTitle) { [self] in
                let mail = vm.emailDraft()
                Terminal.line("  Subject: \(mail.subject)")
                Terminal.line("  \(mail.body.replacingOccurrences(of: "\n", with: "\n  "))")
                Terminal.line("  📎 \(mail.attachment.lastPathComponent) (\(mail.mimeType))")
                // A terminal has no mail composer: the whole message is written as an .eml file to send or open.
                let file = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                    .appendingPathComponent(mail.attachment.deletingPathExtension().lastPathComponent + ".eml")
                do {
                    try vm.emailMessage().write(to: file, options: .atomic)
                    Terminal.line(t("  ✉ written to ", "  ✉ записано в ") + file.path)
                } catch {
                    Terminal.line(t("  ✗ cannot write the message: ", "  ✗ письмо не записано: ") + "\(error)")
                }
            },
            Option(label: t("Attach a photo taken when signing (a path)", "Приложить фото, снятое при подписи (путь)"), enabled: !placed) { [self] in
                if let path = read(t("Path", "Путь")), let data = FileManager.default.contents(atPath: path) { vm.setPhoto(data) }
            },
            Option(label: t("Back to the documents", "К документам")) { [self] in flow.showDocuments() },
        ])
    }

    private func show(_ vm: SigningHistoryViewModel) async {
        if vm.state.rows.isEmpty, vm.state.errorMessage == nil, !vm.state.isLoading { await vm.load() }
        header(vm.state.title)
        Terminal.line("  documentid: \(vm.state.documentID)")
        if vm.state.rows.isEmpty { Terminal.line("  \(vm.state.emptyMessage)") }
        for row in vm.state.rows {
            Terminal.line("  ✎ \(row.name)  \(row.similarity)\(row.isLowMatch ? " ⚠" : "")  \(row.time)  \(row.place ?? "")  \(row.signatureID)\(row.photoURL != nil ? "  📷" : "")")
        }
        Terminal.line("  🌐 \(vm.state.webURL.absoluteString)")
        notices(error: vm.state.errorMessage)
        await menu([Option(label: t("Back to the documents", "К документам")) { [self] in flow.showDocuments() }])
    }
}

/// What the demo remembers between runs (the person), in a JSON file.
final class FilePreferences: DevicePreferences, @unchecked Sendable {
    let url: URL
    private let lock = NSLock()

    init(url: URL) { self.url = url }

    private func load() -> [String: String] {
        (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode([String: String].self, from: $0) } ?? [:]
    }

    func string(_ key: String) -> String? { lock.withLock { load()[key] } }

    func set(_ value: String?, for key: String) {
        lock.withLock {
            var values = load()
            values[key] = value
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? JSONEncoder().encode(values).write(to: url, options: .atomic)
        }
    }
}
