import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseSignature
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Sign To Login app's screens against a live in-process server: every view model driven as
/// the UI would, signatures drawn as touches on the pad.
@MainActor
@Suite("Sign To Login: the screens")
struct SignToLoginScreensTests {
    struct App {
        let server: LiveServer
        let environment: SignToLoginEnvironment
        let folder: URL
        let preferences: InMemoryPreferences
        /// What the splash asked to wait, in seconds (the test's sleep returns at once).
        let slept: Recorder
        var pen = TestPen(state: 7)

        /// Draws a signature on a pad as touches at 60 Hz.
        @MainActor mutating func draw(_ pad: SignaturePadModel, stranger: Bool = false, hurried: Bool = false) {
            let points = pen.signature(stranger: stranger, hurried: hurried)
            for (index, point) in points.enumerated() {
                if index == 0 { pad.begin(x: point.x, y: point.y, time: 0) } else { pad.move(x: point.x, y: point.y, time: Double(index) / 60) }
            }
            pad.end()
        }
    }

    func withApp(language: String = "en", preferences: InMemoryPreferences = InMemoryPreferences(), folder: URL? = nil,
                 _ body: (inout App) async throws -> Void) async throws {
        try await withLiveServer { server in
            let client = try await server.signToLoginClient()
            let folder = folder ?? FileManager.default.temporaryDirectory.appendingPathComponent("stl-docs-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            let slept = Recorder()
            let environment = SignToLoginEnvironment(client: client, localizer: Localizer(language: language), preferences: preferences,
                                                     documentsFolder: folder, splashSeconds: 1.5, sleep: { slept.append($0) })
            var app = App(server: server, environment: environment, folder: folder, preferences: preferences, slept: slept)
            try await body(&app)
        }
    }

    /// The values `read` took on `model` while `action` ran, the first included: what the screen showed in between (its
    /// spinner), which its state after the call no longer says.
    @MainActor
    func seen<S: Equatable, V>(_ model: ScreenModel<S>, _ read: @escaping @MainActor (S) -> V, during action: () async -> Void) async -> [V] {
        var values: [V] = []
        let token = model.observe { values.append(read($0)) }
        await action()
        token.cancel()
        return values
    }

    /// Every enrolment proves the address: the code from the mail, entered on the enrolment screen.
    func prove(_ app: App, _ enrolment: EnrolmentViewModel) async throws {
        #expect(enrolment.state.isAskingForCode, "\(enrolment.state)")
        enrolment.setCode(try await app.server.latestCodeV1(to: enrolment.email))
        await enrolment.submitCode()
    }

    /// Registers `email` through the flow's screens; ends on the documents list.
    func register(_ app: inout App, flow: SignToLoginFlow, email: String, name: String = "Ann Lee", proving: Bool = true) async throws {
        await flow.start()
        flow.register()
        guard case .profile(let form) = flow.state.screen else { Issue.record("not the form: \(flow.state.screen.kind)"); return }
        form.set(.email, email)
        form.set(.userName, name)
        form.next()
        guard case .enrolment(let enrolment) = flow.state.screen else { Issue.record("not enrolment"); return }
        for _ in 0..<10 {
            app.draw(enrolment.pad)
            await enrolment.accept()
        }
        if proving { try await prove(app, enrolment) }
    }

    @Test("splash → start → profile form (checked per field, with the optional picture) → ten signatures with a counter → documents; the server keeps the picture; a relaunch goes straight to the documents")
    func registration() async throws {
        try await withApp { app in
            // setup
            let flow = SignToLoginFlow(environment: app.environment)
            #expect(flow.state.screen.kind == "splash")
            await flow.start()
            #expect(app.slept.values == [1.5])                 // the splash shows its 1–3 s
            guard case .start(nil) = flow.state.screen else { Issue.record("not start"); return }
            flow.register()
            guard case .profile(let form) = flow.state.screen else { Issue.record("not the form"); return }

            // the form: required fields, rules, keyboards
            #expect(!form.state.isNextEnabled)
            #expect(form.state.fields.first { $0.field == .email }?.keyboard == .email)
            #expect(form.state.fields.first { $0.field == .phone }?.keyboard == .phone)
            form.set(.email, "ann@")
            #expect(form.state.fields.first { $0.field == .email }?.error == "Enter an email address such as name@example.com.")
            form.set(.email, "Ann@Example.com")
            form.set(.userName, "Ann Lee")
            #expect(form.state.isNextEnabled)
            form.set(.birthday, "31.13.1990")
            #expect(!form.state.isNextEnabled && form.state.fields.first { $0.field == .birthday }?.error != nil)
            form.set(.birthday, "31.12.1990")
            form.set(.phone, "+79123456789")
            #expect(form.state.isNextEnabled)
            // the optional picture: set, removed, set again; "Next" takes it along
            let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
            form.setPhoto(png)
            #expect(form.state.photo == png && form.state.isNextEnabled)
            form.setPhoto(nil)
            #expect(form.state.photo == nil)
            form.setPhoto(png)
            form.next()

            // enrolment: a signature too short cannot be accepted; ten go in one request
            guard case .enrolment(let enrolment) = flow.state.screen else { Issue.record("not enrolment"); return }
            #expect(enrolment.state.counter == "Signature 1 of 10")
            enrolment.pad.begin(x: 10, y: 10, time: 0)
            enrolment.pad.end()
            #expect(!enrolment.state.isAcceptEnabled)
            enrolment.pad.clear()
            enrolment.pad.setColor(.black)
            #expect(enrolment.pad.state.color == .black)
            for index in 0..<10 {
                app.draw(enrolment.pad)
                #expect(enrolment.state.isAcceptEnabled)
                if index < 9 {
                    await enrolment.accept()
                    #expect(enrolment.state.counter == "Signature \(index + 2) of 10" && enrolment.pad.state.isEmpty)
                } else {
                    // The tenth sends the ten: the screen shows it is waiting (Accept off meanwhile), then stops.
                    let loading = await seen(enrolment, { ($0.isLoading, $0.isAcceptEnabled) }) { await enrolment.accept() }
                    #expect(loading.contains { $0.0 && !$0.1 } && loading.last?.0 == false, "\(loading)")
                }
            }
            #expect(enrolment.state.infoMessage == "We sent a code to ann@example.com: enter it to confirm the address is yours.")
            try await prove(app, enrolment)

            // validate
            guard case .documents(let documents) = flow.state.screen else { Issue.record("not documents: \(enrolment.state)"); return }
            #expect(documents.state.items.isEmpty && documents.state.emptyMessage.hasPrefix("No documents yet"))
            #expect(app.environment.rememberedProfile == SignToLoginProfile(email: "ann@example.com", userName: "Ann Lee", phone: "+79123456789", birthday: "31.12.1990"))
            // The picture went with the registration: the server keeps the form's bytes.
            #expect(try await app.environment.client.profilePhoto().data == png)
            let relaunched = SignToLoginFlow(environment: app.environment)
            await relaunched.start()
            guard case .documents = relaunched.state.screen else { Issue.record("relaunch did not skip to documents"); return }
        }
    }

    @Test("enrolment: a signature that does not fit is refused (res 2) and exactly one more is asked for; Cancel goes back to the form with its fields")
    func enrolmentRetryAndCancel() async throws {
        try await withApp { app in
            // setup
            let flow = SignToLoginFlow(environment: app.environment)
            await flow.start()
            flow.register()
            guard case .profile(let form) = flow.state.screen else { return }
            form.set(.email, "bob@example.com")
            form.set(.userName, "Bob")
            form.set(.company, "Acme")
            form.next()
            guard case .enrolment(let enrolment) = flow.state.screen else { return }

            // MUT: nine of his and a stranger's
            for index in 0..<10 {
                app.draw(enrolment.pad, stranger: index == 4)
                await enrolment.accept()
            }
            try await prove(app, enrolment)

            // validate
            #expect(enrolment.state.required == 1 && enrolment.state.counter == "Signature 1 of 1", "\(enrolment.state)")
            #expect(enrolment.state.infoMessage == "Some signatures could not be used. Please sign 1 more times.")
            guard case .enrolment = flow.state.screen else { Issue.record("left enrolment"); return }
            enrolment.cancel()
            guard case .profile(let again) = flow.state.screen else { Issue.record("not back at the form"); return }
            #expect(again.value(.email) == "bob@example.com" && again.value(.company) == "Acme")
            again.next()
            guard case .enrolment(let second) = flow.state.screen else { return }
            // A new enrolment screen asks for ten again, and a new code (ten stand on their own).
            #expect(second.state.required == 10 && second.state.collected == 0)
            app.server.clock.advance(by: 61)  // past the resend cooldown of the first code
            for _ in 0..<10 {
                app.draw(second.pad)
                await second.accept()
            }
            try await prove(app, second)
            guard case .documents = flow.state.screen else { Issue.record("not enrolled: \(second.state)"); return }
            #expect(app.environment.rememberedProfile?.company == "Acme")
        }
    }

    @Test("an address with an account: enrolment asks for the emailed code; a wrong code is refused, the right one enrols")
    func enrolmentEmailCode() async throws {
        try await withApp { app in
            _ = try await app.server.makeV1Account(email: "cat@example.com", tag: "cat")
            let flow = SignToLoginFlow(environment: app.environment)
            try await register(&app, flow: flow, email: "cat@example.com", name: "Cat", proving: false)
            guard case .enrolment(let enrolment) = flow.state.screen else { Issue.record("left enrolment"); return }
            #expect(enrolment.state.isAskingForCode && enrolment.state.infoMessage?.contains("cat@example.com") == true)
            enrolment.setCode("000000")
            await enrolment.submitCode()
            #expect(enrolment.state.errorMessage != nil && enrolment.state.isAskingForCode)
            enrolment.setCode(try await app.server.latestCodeV1(to: "cat@example.com"))
            await enrolment.submitCode()
            guard case .documents = flow.state.screen else { Issue.record("not enrolled: \(enrolment.state)"); return }
        }
    }

    @Test("res 3: enrolled through another app, the person logging in here is offered a new sample: the form with the email, ten signatures, the code; then the documents with \"Signature sample created\" until dismissed")
    func newSampleForThisApp() async throws {
        try await withApp { app in
            // setup: Dan enrolled through another company's app
            let elsewhere = try await app.server.signToLoginClient()
            _ = try await app.server.enrol(elsewhere, SignToLoginProfile(email: "dan@example.com", userName: "Dan"), signatures: (0..<10).map { _ in app.pen.signature() })
            let flow = SignToLoginFlow(environment: app.environment)
            await flow.start()
            app.server.clock.advance(by: 61)  // past the code's resend cooldown (the other enrolment mailed one)

            // MUT: log in here
            flow.logIn()
            guard case .signIn(let signIn) = flow.state.screen else { Issue.record("not the sign-in"); return }
            signIn.setEmail("dan@example.com")
            await signIn.submit()

            // validate: the form, with the address, to make this app's sample
            guard case .profile(let form) = flow.state.screen else { Issue.record("not offered a new sample: \(flow.state.screen.kind)"); return }
            #expect(form.value(.email) == "dan@example.com" && !form.state.isNextEnabled)
            form.set(.userName, "Dan")
            form.next()
            guard case .enrolment(let enrolment) = flow.state.screen else { Issue.record("not the enrolment"); return }
            for _ in 0..<10 {
                app.draw(enrolment.pad)
                await enrolment.accept()
            }
            try await prove(app, enrolment)
            guard case .documents(let documents) = flow.state.screen else { Issue.record("not enrolled: \(enrolment.state)"); return }
            #expect(documents.state.notice == "Signature sample created" && documents.state.noticeButton == "OK")
            documents.reload()
            #expect(documents.state.notice == "Signature sample created", "the notice stays until dismissed")
            documents.dismissNotice()
            #expect(documents.state.notice == nil)
            // Logging in here now goes to the signature.
            #expect(try await app.environment.client.login(email: "dan@example.com") == .enrolled)
        }
    }

    @Test("the photo taken when signing goes with the signature: the server keeps it, the history names it, and its bytes are the ones taken")
    func signingPhoto() async throws {
        try await withApp { app in
            let flow = SignToLoginFlow(environment: app.environment)
            try await register(&app, flow: flow, email: "ann@example.com")
            let incoming = FileManager.default.temporaryDirectory.appendingPathComponent("Photo-\(UUID().uuidString.prefix(6)).pdf")
            try minimalPDF(text: "Contract").write(to: incoming)
            defer { try? FileManager.default.removeItem(at: incoming) }
            flow.openFile(incoming)
            guard case .viewer(let viewer) = flow.state.screen else { Issue.record("not the viewer"); return }
            await viewer.open()
            let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!

            // MUT: the signing screen opens, the app takes the photo meanwhile, the person signs and saves
            let signing = viewer.sign()
            viewer.setPhoto(png)
            #expect(signing.photo == png, "the photo reaches the open signing screen")
            app.draw(signing.pad)
            await signing.submit()
            await viewer.save()

            // validate
            let entry = try #require(viewer.state.history.first, "\(viewer.state)")
            let photoURL = try #require(entry.photoURL, "the history names the photo")
            // The URL names the server's public address; fetched here from the server under test.
            let local = app.server.baseURL.appendingPathComponent(photoURL.path)
            let (bytes, response) = try await URLSessionTransport().send(URLRequest(url: local))
            #expect(photoURL.path.hasPrefix("/signature-photos/"))
            #expect(response.statusCode == 200 && bytes == png)
        }
    }

    @Test("the profile form leaves out what a field does not take, as it is typed, and says so")
    func profileFormCharacters() async throws {
        try await withApp { app in
            let form = ProfileFormViewModel(localizer: app.environment.localizer)
            form.set(.userName, "Ann2 <Lee>")
            #expect(form.value(.userName) == "Ann Lee" && form.state.fields.first { $0.field == .userName }?.error == "Not allowed here: 2 < >")
            form.set(.phone, "+7 916 abc 123-45-67")
            #expect(form.value(.phone) == "+7 916  123-45-67")
            form.set(.company, "<b>Acme</b>")
            #expect(form.value(.company) == "bAcme/b")
            form.set(.birthday, "17/05/1990")
            #expect(form.value(.birthday) == "17051990" && form.state.fields.first { $0.field == .birthday }?.error != nil)
            form.set(.birthday, "17.05.1990")
            form.set(.email, "ann@example.com")
            form.set(.userName, "Ann Lee")
            form.set(.company, "Acme & Co.")
            #expect(form.state.fields.allSatisfy { $0.error == nil } && form.state.isNextEnabled, "\(form.state.fields)")
        }
    }

    @Test("log in by email: unknown → back to start with the error; enrolled → the signature: a stranger's is refused with its match, the person's goes in")
    func logIn() async throws {
        try await withApp(language: "ru") { app in
            // setup: Dan enrolled through the client
            let client = app.environment.client
            _ = try await app.server.enrol(client, SignToLoginProfile(email: "dan@example.com", userName: "Dan"), signatures: (0..<10).map { _ in app.pen.signature() })
            let flow = SignToLoginFlow(environment: app.environment)
            await flow.start()

            // unknown
            flow.logIn()
            guard case .signIn(let signIn) = flow.state.screen else { return }
            signIn.setEmail("nobody@example.com")
            await signIn.submit()
            guard case .start(let message?) = flow.state.screen else { Issue.record("not back at start"); return }
            #expect(message == "Учётной записи nobody@example.com нет. Сначала зарегистрируйтесь.")

            // enrolled
            flow.logIn()
            guard case .signIn(let again) = flow.state.screen else { return }
            again.setEmail("dan@example.com")
            let asking = await seen(again, \.isLoading) { await again.submit() }
            #expect(asking.contains(true) && asking.last == false, "the address is being checked: \(asking)")
            guard case .authenticate(let auth) = flow.state.screen else { Issue.record("not the signature"); return }
            app.draw(auth.pad, stranger: true)
            let scoring = await seen(auth, { ($0.isLoading, $0.isSubmitEnabled) }) { await auth.submit() }
            #expect(scoring.contains { $0.0 && !$0.1 } && scoring.last?.0 == false, "the signature is being scored: \(scoring)")
            #expect(auth.state.isAccepted == false && auth.state.similarityText?.hasPrefix("Совпадение:") == true && auth.pad.state.isEmpty)
            guard case .authenticate = flow.state.screen else { Issue.record("a stranger got in"); return }
            app.draw(auth.pad)
            await auth.submit()
            guard case .documents = flow.state.screen else { Issue.record("not in: \(auth.state)"); return }
            #expect(flow.email == "dan@example.com" && app.environment.rememberedProfile?.email == "dan@example.com")
        }
    }

    @Test("documents: a PDF from elsewhere is copied in; sign, move, resize, delete, sign again and save; the history; a stranger's signature refused, a hurried one of hers signed and warned of; a copy changed outside warned of; the deep link; the email draft")
    func documents() async throws {
        try await withApp { app in
            // setup: Ann registered
            let flow = SignToLoginFlow(environment: app.environment)
            try await register(&app, flow: flow, email: "ann@example.com")
            let incoming = FileManager.default.temporaryDirectory.appendingPathComponent("Contract-\(UUID().uuidString.prefix(6)).pdf")
            try minimalPDF(text: "Contract").write(to: incoming)
            defer { try? FileManager.default.removeItem(at: incoming) }

            // MUT: opened from another app
            flow.openFile(incoming)
            guard case .viewer(let viewer) = flow.state.screen else { Issue.record("not the viewer"); return }
            await viewer.open()
            #expect(viewer.state.pages == [.init(width: 595, height: 842)] && viewer.state.documentID == nil && viewer.state.isSignEnabled)
            let copy = viewer.url
            #expect(copy.deletingLastPathComponent().standardizedFileURL.path.trimmingSuffixSlash == app.folder.standardizedFileURL.path.trimmingSuffixSlash)

            // sign: draw, scored, placed; move and resize stay on the page; delete; sign again
            let signing = viewer.sign()
            app.draw(signing.pad)
            await signing.submit()
            let placed = try #require(viewer.state.placement)
            #expect(placed.page == 0 && placed.x + placed.width <= 595 && placed.y + placed.height <= 842)
            viewer.move(dx: -10_000, dy: -10_000)
            #expect(viewer.state.placement?.x == 0 && viewer.state.placement?.y == 0)
            viewer.resize(scale: 100)
            #expect(viewer.state.placement?.width == 595)
            viewer.resize(scale: 0.3)
            viewer.move(dx: 300, dy: 600)
            viewer.deletePlacement()
            #expect(viewer.state.placement == nil && !viewer.state.isSaveEnabled)
            let again = viewer.sign()
            app.draw(again.pad)
            await again.submit()
            viewer.move(dx: -200, dy: -100)
            let rect = try viewer.userSpaceRect(of: try #require(viewer.state.placement))
            let saving = await seen(viewer, { ($0.isLoading, $0.isSaveEnabled) }) { await viewer.save() }
            #expect(saving.contains { $0.0 && !$0.1 } && saving.last?.0 == false, "the save shows it is under way, Save off: \(saving)")

            // validate: the file is signed, its history recorded
            let documentID = try #require(viewer.state.documentID)
            #expect(viewer.state.infoMessage == "Signed and saved as \(copy.lastPathComponent)." && viewer.state.errorMessage == nil)
            #expect(viewer.state.history.count == 1 && viewer.state.history[0].name == "Ann Lee" && viewer.state.changedOutsideWarning == nil)
            let signed = try Data(contentsOf: copy)
            #expect(signed.starts(with: minimalPDF(text: "Contract")))
            #expect(try PDFDocument(data: signed).linkURIs() == [[app.environment.client.historyURL(documentID: documentID).absoluteString]])
            #expect(rect.x >= 0 && rect.maxX <= 595 && rect.y >= 0 && rect.maxY <= 842)

            // reopened: current, no warning
            let reopened = DocumentViewerViewModel(environment: app.environment, email: "ann@example.com", url: copy)
            await reopened.open()
            #expect(reopened.state.documentID == documentID && reopened.state.changedOutsideWarning == nil && reopened.state.lowMatchWarning == nil)

            // a stranger's signature: placed, but below the signing floor, so the save is refused and the file stays as it was
            let poor = reopened.sign()
            app.draw(poor.pad, stranger: true)
            await poor.submit()
            #expect(reopened.state.placement != nil)
            await reopened.save()
            #expect(reopened.state.errorMessage?.contains("is not a signature of this user") == true, "\(reopened.state)")
            #expect(reopened.state.history.count == 1 && reopened.state.lowMatchWarning == nil)
            #expect(try Data(contentsOf: copy) == signed)

            // her own, in a hurry: below the app's threshold, above the floor; signed with her
            // session, and every reader is warned (the history's row and the viewer's warning)
            reopened.deletePlacement()
            let hurried = reopened.sign()
            app.draw(hurried.pad, hurried: true)
            await hurried.submit()
            let low = try #require(hurried.state.similarity)
            #expect(low >= 0.3 && low < 0.5 && !hurried.state.isAccepted, "a low match: \(hurried.state)")
            #expect(hurried.state.similarityText == "Match: \(Int((low * 100).rounded()))%. A low match: whoever opens the document will be warned of it.")
            await reopened.save()
            #expect(reopened.state.errorMessage == nil && reopened.state.history.count == 2, "\(reopened.state)")
            #expect(reopened.state.history.map(\.isLowMatch) == [false, true])
            #expect(reopened.state.lowMatchWarning?.contains("Ann Lee") == true, "\(reopened.state)")
            let lowSigned = try Data(contentsOf: copy)
            let readAgain = DocumentViewerViewModel(environment: app.environment, email: "ann@example.com", url: copy)
            await readAgain.open()
            #expect(readAgain.state.changedOutsideWarning == nil && readAgain.state.lowMatchWarning == reopened.state.lowMatchWarning)
            #expect(lowSigned.starts(with: signed), "the new signature is added to the signed file")

            // changed outside the app: the warning
            var tampered = try Data(contentsOf: copy)
            tampered.append(contentsOf: Array("% edited elsewhere\n".utf8))
            try tampered.write(to: copy)
            let warned = DocumentViewerViewModel(environment: app.environment, email: "ann@example.com", url: copy)
            await warned.open()
            #expect(warned.state.changedOutsideWarning == "Warning: this document has been changed outside Sign To Login since it was last signed.")

            // the history, from the viewer and from the deep link
            var shown: SigningHistoryViewModel?
            warned.onShowHistory = { shown = $0 }
            warned.showHistory()
            #expect(shown?.state.rows.count == 2)
            #expect(flow.openLink(URL(string: SignToLoginAPI.deepLink(documentID: documentID))!))
            guard case .history(let history) = flow.state.screen else { Issue.record("the deep link did not open the history"); return }
            await history.load()
            #expect(history.state.rows.map(\.name) == ["Ann Lee", "Ann Lee"] && history.state.rows.map(\.isLowMatch) == [false, true])
            #expect(!flow.openLink(URL(string: "stl://user/?other=1")!))

            // the email draft
            let mail = warned.emailDraft(to: ["bob@example.com"])
            #expect(mail.recipients == ["bob@example.com"] && mail.attachment == copy && mail.mimeType == "application/pdf")
            #expect(mail.subject == "Signed document: \(copy.deletingPathExtension().lastPathComponent)" && mail.body.contains(documentID))

            // the list shows the file
            flow.showDocuments()
            guard case .documents(let list) = flow.state.screen else { return }
            #expect(list.state.items.map(\.url.lastPathComponent) == [copy.lastPathComponent])
        }
    }
}

extension SignToLoginScreensTests {
    @Test("a page turned 90°: shown landscape, and the stamp placed at its top left lands at the user-space origin, turned")
    func rotatedPage() async throws {
        try await withApp { app in
            // setup
            _ = try await app.server.enrol(app.environment.client, SignToLoginProfile(email: "eve@example.com", userName: "Eve"),
                                           signatures: (0..<10).map { _ in app.pen.signature() })
            try FileManager.default.createDirectory(at: app.folder, withIntermediateDirectories: true)
            let url = app.folder.appendingPathComponent("turned.pdf")
            try minimalPDF(rotate: 90).write(to: url)
            let viewer = DocumentViewerViewModel(environment: app.environment, email: "eve@example.com", url: url)
            await viewer.open()
            let signing = viewer.sign()
            app.draw(signing.pad)
            await signing.submit()

            // MUT: to the shown page's top left, 200 wide
            viewer.move(dx: -10_000, dy: -10_000)
            viewer.resize(scale: 200 / (viewer.state.placement?.width ?? 1))
            let placement = try #require(viewer.state.placement)
            let rect = try viewer.userSpaceRect(of: placement)
            await viewer.save()

            // validate
            #expect(viewer.state.pages == [.init(width: 842, height: 595)])
            #expect(abs(placement.width - 200) < 0.001 && placement.x == 0 && placement.y == 0)

            // A look-alike link to another server's history page is not this app's document.
            let foreign = app.folder.appendingPathComponent("foreign.pdf")
            try PDFSigner.sign(minimalPDF(), page: 0, rect: PDFRect(x: 10, y: 10, width: 100, height: 40),
                               stamp: SignatureStamp(ink: SignatureCapture().ink(width: 100, height: 40),
                                                     link: "https://elsewhere.example/documents/?documentid=0123456789abcdef0123")).write(to: foreign)
            let other = DocumentViewerViewModel(environment: app.environment, email: "eve@example.com", url: foreign)
            await other.open()
            #expect(other.state.documentID == nil && other.state.errorMessage == nil)
            #expect(abs(rect.x) < 0.001 && abs(rect.y) < 0.001 && abs(rect.width - placement.height) < 0.001 && abs(rect.height - 200) < 0.001)
            #expect(viewer.state.infoMessage == "Signed and saved as turned.pdf.")
        }
    }
}

extension SignToLoginFlow.Screen {
    var kind: String { String(describing: self).components(separatedBy: "(").first ?? "" }
}

/// Records what the view models asked to wait.
final class Recorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Double] = []
    var values: [Double] { lock.withLock { recorded } }
    func append(_ value: Double) { lock.withLock { recorded.append(value) } }
}

extension String {
    var trimmingSuffixSlash: String { hasSuffix("/") ? String(dropLast()) : self }
}
