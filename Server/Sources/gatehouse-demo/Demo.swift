import ArgumentParser
import Foundation
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

@main
struct GatehouseDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse-demo",
        abstract: "Walk through the apps of the specs in a terminal, with the same view models an iOS app uses.",
        subcommands: [PhoneAccountsDemo.self, WebSocketLoginDemo.self, MessengerAuthDemo.self, MessengerDemo.self, SignToLoginDemo.self, SignPDFDemo.self, OpenPDFDemo.self,
                      WalletDemo.self, NotificationsDemo.self],
        defaultSubcommand: PhoneAccountsDemo.self
    )
}

/// The options every demo app takes.
struct DemoOptions: ParsableArguments {
    @Option(help: "The Gatehouse server.")
    var server: String = "http://127.0.0.1:8080"

    @Option(help: "en or ru (default: the device's language).")
    var language: String?

    @Option(help: "Where the session is kept between runs (default: the platform's store).")
    var sessionFile: String?

    @Option(name: .customLong("as"), help: ArgumentHelp("Who sits at this terminal: each name keeps its own session and offline data, so two people need two names (--as ann, --as bob in two terminals).", valueName: "name"))
    var person: String?

    func validate() throws {
        if let person, person.isEmpty || person.count > 40 || !person.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) {
            throw ValidationError("--as takes a short name of letters, digits, - and _, such as ann")
        }
    }

    func serverURL() throws -> URL {
        guard let url = URL(string: server), url.scheme != nil else { throw ValidationError("--server must be a URL such as http://127.0.0.1:8080") }
        return url
    }

    /// The platform store's name for this app and this person.
    private func storeName(_ app: String) -> String { person.map { "\(app)-\($0.lowercased())" } ?? app }

    var localizer: Localizer { language.map(Localizer.init(language:)) ?? .device }

    /// The messenger's offline stores: beside the session file when one is given.
    func messengerStores(defaultName: String) -> MessengerStores {
        sessionFile.map { MessengerStores(directory: URL(fileURLWithPath: $0).deletingLastPathComponent().appendingPathComponent("messenger")) }
            ?? .standard(name: storeName(defaultName))
    }

    func sessionStore(defaultName: String) -> any SessionStore {
        sessionFile.map { FileSessionStore(url: URL(fileURLWithPath: $0)) } ?? DefaultSessionStore.make(name: storeName(defaultName))
    }
}

struct PhoneAccountsDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phone-accounts",
        abstract: "The five scenarios of docs/phone-accounts.md: register, log in, confirm the email, restore the password, change the email."
    )

    @OptionGroup var options: DemoOptions

    @MainActor
    func run() async throws {
        let url = try options.serverURL()
        let localizer = options.localizer
        let client = PhoneAccountsClient(baseURL: url, sessionStore: options.sessionStore(defaultName: "gatehouse-demo"), language: localizer.language)
        let flow = PhoneAccountsFlow(environment: PhoneAccountsEnvironment(client: client, localizer: localizer))
        await PhoneAccountsTerminal(flow: flow, outbox: DevOutboxClient(baseURL: url), language: localizer.language).run()
    }
}

struct WebSocketLoginDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "websocket-login",
        abstract: "The two-screen app of docs/websocket-login.md: email and password over the WebSocket gateway."
    )

    @OptionGroup var options: DemoOptions

    @MainActor
    func run() async throws {
        let url = try options.serverURL()
        let localizer = options.localizer
        let client = CustomerGatewayClient(url: CustomerGatewayClient.gatewayURL(for: url), sessionStore: options.sessionStore(defaultName: "gatehouse-demo-websocket"))
        let flow = WebSocketLoginFlow(environment: WebSocketLoginEnvironment(client: client, localizer: localizer))
        await WebSocketLoginTerminal(flow: flow, language: localizer.language).run()
        await client.disconnect()
    }
}

extension DemoOptions {
    /// The messenger app's terminal, on the environment an iPhone would give it (sessions labelled
    /// `gatehouse-demo`, the offline store beside the session file).
    @MainActor
    func messengerTerminal(fullScreen: Bool) throws -> MessengerAuthTerminal {
        let url = try serverURL()
        let client = AccountsClient(baseURL: url, sessionStore: sessionStore(defaultName: "gatehouse-demo-messenger"), language: localizer.language)
        let environment = MessengerEnvironment(client: client, localizer: localizer, device: "gatehouse-demo",
                                               stores: messengerStores(defaultName: "gatehouse-demo-messenger"),
                                               preferences: UserDefaultsPreferences(suiteName: "gatehouse-demo-messenger"))
        return MessengerAuthTerminal(flow: MessengerAppFlow(environment: environment), outbox: DevOutboxClient(baseURL: url),
                                     language: localizer.language, fullScreen: fullScreen)
    }
}

struct MessengerAuthDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messenger-auth",
        abstract: "The authorization epic of the messenger spec (docs/specs.md) over /v1: splash, log in by email or tag, register with an email code, reset the password, log out."
    )

    @OptionGroup var options: DemoOptions

    @MainActor
    func run() async throws {
        try await options.messengerTerminal(fullScreen: false).run()
    }
}

struct MessengerDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messenger",
        abstract: "The whole messenger of the messenger spec full-screen: sign in, then Friends, Chats and Profile with arrow keys; chats update live and work offline."
    )

    @OptionGroup var options: DemoOptions

    @MainActor
    func run() async throws {
        try await options.messengerTerminal(fullScreen: true).run()
    }
}

struct WalletDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet",
        abstract: "The wallet of the wallet spec: sign up, add info and a phone, attach a wallet, send money and ask for it in dialogs (an operator credits it with `gatehouse wallet credit`)."
    )

    @OptionGroup var options: DemoOptions

    @MainActor
    func run() async throws {
        let url = try options.serverURL()
        let localizer = options.localizer
        let client = AccountsClient(baseURL: url, sessionStore: options.sessionStore(defaultName: "gatehouse-demo-wallet"), language: localizer.language)
        let accounts = MessengerEnvironment(client: client, localizer: localizer, device: "gatehouse-demo",
                                            stores: options.messengerStores(defaultName: "gatehouse-demo-wallet"),
                                            preferences: UserDefaultsPreferences(suiteName: "gatehouse-demo-wallet"))
        let flow = WalletFlow(environment: WalletEnvironment(accounts: accounts))
        await WalletTerminal(flow: flow, outbox: DevOutboxClient(baseURL: url), language: localizer.language).run()
    }
}

/// What the Sign To Login demos share: the server, the app's key, the documents folder and the
/// file the person is remembered in.
struct SignToLoginOptions: ParsableArguments {
    @Option(help: "The app's API key (gatehouse apps create --name … --bundle-id … --email … --json).")
    var apikey: String

    @Option(help: "The app's documents folder (default: ~/SignToLogin).")
    var documents: String?

    @Option(help: "Where the app remembers the person between runs (default: beside the documents).")
    var stateFile: String?

    @MainActor
    func environment(_ options: DemoOptions) throws -> SignToLoginEnvironment {
        let url = try options.serverURL()
        let folder = URL(fileURLWithPath: documents ?? (NSHomeDirectory() + "/SignToLogin"))
        let state = URL(fileURLWithPath: stateFile ?? folder.deletingLastPathComponent().appendingPathComponent(".sign-to-login-demo.json").path)
        let device = DeviceFacts(osVersion: String(ProcessInfo.processInfo.operatingSystemVersionString.prefix(40)),
                                 deviceModel: "iPhone16,2", screenWidth: 393, screenHeight: 852)
        // The person's session beside what the app remembers, 0600 (what the Keychain is on a phone).
        let session = FileSessionStore(url: state.deletingPathExtension().appendingPathExtension("session.json"))
        let client = SignToLoginClient(server: url, apiKey: apikey, device: FixedDeviceFacts(device), sessionStore: session)
        return SignToLoginEnvironment(client: client, localizer: options.localizer, preferences: FilePreferences(url: state),
                                      documentsFolder: folder, splashSeconds: 1)
    }
}

struct SignPDFDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-pdf",
        abstract: "Signs a PDF through the document viewer's model as the remembered person: scored by the server, stamped by incremental update, saved and registered; prints the history link."
    )

    @OptionGroup var options: DemoOptions
    @OptionGroup var app: SignToLoginOptions

    @Argument(help: "The PDF to sign.")
    var input: String

    @Option(help: "The page, from 1.")
    var page: Int = 1

    @Option(help: "Where the signature goes, x,y,w,h in points of the page as shown (origin top left; the height follows the signature).")
    var rect: String

    @Option(help: "The signature: a JSON file of [x, y] points as a finger drew them.")
    var signature: String

    @Option(help: "The signed file (default: the input, signed in place).")
    var out: String?

    @MainActor
    func run() async throws {
        let environment = try app.environment(options)
        guard let email = environment.rememberedProfile?.email else {
            throw Refused("nobody is registered in \(app.stateFile ?? "the demo's state"): run gatehouse-demo sign-to-login first")
        }
        let numbers = rect.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard numbers.count == 4 || numbers.count == 3, numbers[2] > 0 else { throw ValidationError("--rect is x,y,w,h") }
        guard let points = SignToLoginTerminal.points(file: signature) else { throw ValidationError("--signature is not a point file") }
        let target = URL(fileURLWithPath: out ?? input)
        if target.path != URL(fileURLWithPath: input).path {
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: URL(fileURLWithPath: input), to: target)
        }
        let viewer = DocumentViewerViewModel(environment: environment, email: email, url: target)
        await viewer.open()
        if let error = viewer.state.errorMessage { throw Refused(error) }
        let signing = viewer.sign()
        SignToLoginTerminal.feed(points, to: signing.pad)
        await signing.submit()
        guard viewer.state.placement != nil else { throw Refused(signing.state.errorMessage ?? "the signature was not accepted") }
        viewer.setPlacement(page: page - 1, x: numbers[0], y: numbers[1], width: numbers[2])
        await viewer.save()
        if let error = viewer.state.errorMessage { throw Refused(error) }
        print(viewer.state.infoMessage ?? "")
        if let similarity = signing.state.similarityText { print(similarity) }
        if let id = viewer.state.documentID { print("History: \(environment.client.historyURL(documentID: id).absoluteString)") }
        print("Saved: \(target.path)")
    }
}

struct OpenPDFDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open-pdf",
        abstract: "Opens a PDF in the document viewer's model: its signing history, and the warnings (changed outside the app, low matches)."
    )

    @OptionGroup var options: DemoOptions
    @OptionGroup var app: SignToLoginOptions

    @Argument(help: "The PDF to open.")
    var file: String

    @MainActor
    func run() async throws {
        let environment = try app.environment(options)
        let viewer = DocumentViewerViewModel(environment: environment, email: environment.rememberedProfile?.email ?? "", url: URL(fileURLWithPath: file))
        await viewer.open()
        if let error = viewer.state.errorMessage { throw Refused(error) }
        print(viewer.state.title)
        guard let id = viewer.state.documentID else {
            print("Not signed with Sign To Login yet.")
            return
        }
        print("documentid: \(id)")
        for row in viewer.state.history { print("✎ \(row.name)  \(row.similarity)\(row.isLowMatch ? " ⚠" : "")  \(row.time)  \(row.signatureID)") }
        if let warning = viewer.state.changedOutsideWarning { print("⚠ \(warning)") }
        if let warning = viewer.state.lowMatchWarning { print("⚠ \(warning)") }
        if viewer.state.changedOutsideWarning == nil { print("Unchanged since its last signing.") }
    }
}

struct SignToLoginDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign-to-login",
        abstract: "The Sign To Login app of docs/sign-to-login.md: register with ten signatures, log in by signature, sign PDFs and read their history."
    )

    @OptionGroup var options: DemoOptions
    @OptionGroup var app: SignToLoginOptions

    @MainActor
    func run() async throws {
        let environment = try app.environment(options)
        await SignToLoginTerminal(flow: SignToLoginFlow(environment: environment), outbox: DevOutboxClient(baseURL: try options.serverURL()),
                                  language: environment.localizer.language).run()
    }
}

/// What the server or the file refused, once the command line itself was right: said as
/// `Error: …` and exit status 1, without the usage text a `ValidationError` (a wrong option) adds.
struct Refused: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
