import ArgumentParser
import Foundation
import GatehouseAPI
import GatehouseDevSupport
import GatehouseKit
import GatehouseScreens

/// `gatehouse-demo notifications`: a phone's lock screen in a terminal. Signs in, hands a push
/// token over with `PushRegistration` as an app does after the OS gives it one, and shows each push
/// the server writes for that device (a development server keeps them in its outbox) as a banner,
/// with where opening it leads (`PushRoute`).
struct NotificationsDemo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "A phone's notifications: sign in, register a push token, and see each push the server sends this device (messages, friend requests, money) with where opening it leads."
    )

    @OptionGroup var options: DemoOptions

    @Option(help: "An email, a tag or a phone to sign in with.")
    var identifier: String

    @Option(help: "The password (or the GATEHOUSE_DEMO_PASSWORD variable).")
    var password: String?

    @Option(help: "Stop after this many pushes (default: run until Ctrl-C).")
    var count: Int?

    func run() async throws {
        let url = try options.serverURL()
        let localizer = options.localizer
        guard let password = password ?? ProcessInfo.processInfo.environment["GATEHOUSE_DEMO_PASSWORD"] else {
            throw ValidationError("give --password or GATEHOUSE_DEMO_PASSWORD")
        }
        let accounts = AccountsClient(baseURL: url, sessionStore: InMemorySessionStore(), language: localizer.language)
        try await accounts.login(identifier: identifier, password: password, device: "gatehouse-demo notifications")
        let push = PushRegistration(accounts: accounts, platform: .fcm, language: localizer.language)
        guard let device = try await push.tokenReceived("gatehouse-demo-" + UUID().uuidString.lowercased()) else {
            throw Refused("the push token could not be registered")
        }
        let outbox = DevOutboxClient(baseURL: url)
        let destination = device.id.uuidString.lowercased()
        // Ctrl-C is caught from before the line that says the demo listens: one pressed as soon as
        // it shows is never lost (a test that did so timed out once, on a loaded machine).
        let interrupts = Interrupts()
        print(localizer.language == "ru" ? "Жду уведомлений этого устройства (\(device.tokenHint))…" : "Listening for this device's pushes (\(device.tokenHint))…")
        // Until the count is reached or Ctrl-C; then the demo's session ends, and the server removes
        // its push device with it: a run leaves nothing behind (the account's device limit is not
        // used up by runs of the demo).
        let count = self.count
        // Whichever ends first: the pushes counted, or Ctrl-C. The listening task is then cancelled but not waited
        // for: a poll of the outbox cancelled in flight may take long to give up (seen once on a loaded machine, the
        // sign-out line never came), and the sign-out below does not need it gone.
        let (ended, end) = AsyncStream<(any Error)?>.makeStream(bufferingPolicy: .bufferingNewest(2))
        let listening = Task {
            do {
                try await Self.show(outbox: outbox, destination: destination, count: count, localizer: localizer)
                end.yield(nil)
            } catch {
                end.yield(error)
            }
        }
        let waiting = Task {
            await interrupts.next()
            end.yield(nil)
        }
        var first = ended.makeAsyncIterator()
        let failure: (any Error)? = await first.next() ?? nil
        listening.cancel()
        waiting.cancel()
        // Signed out however listening ended (a lost server too), then its error, if any.
        try? await accounts.logout()
        await push.loggedOut()
        print(localizer.language == "ru" ? "Вышел: сессия и устройство удалены." : "Signed out: the session and its device are gone.")
        if let failure { throw failure }
    }

    /// Prints each push the outbox holds for `destination` as a banner, until `count` were shown
    /// (or the task is cancelled).
    static func show(outbox: DevOutboxClient, destination: String, count: Int?, localizer: Localizer) async throws {
        var seen: Set<String> = []
        var shown = 0
        while count.map({ shown < $0 }) ?? true {
            let messages = (try? await outbox.messages(to: destination)) ?? []
            for message in messages.reversed() where !seen.contains(message.createdAt + message.body) {
                seen.insert(message.createdAt + message.body)
                guard let envelope = try? JSONSerialization.jsonObject(with: Data(message.body.utf8)) as? [String: Any] else { continue }
                let title = envelope["title"] as? String ?? ""
                let body = envelope["body"] as? String ?? ""
                let badge = envelope["badge"] as? Int
                print("🔔 \(title) — \(body)" + (badge.map { "   [\($0)]" } ?? ""))
                if let route = PushRoute(userInfo: (envelope["data"] as? [String: String]) ?? [:]) {
                    print("   " + Self.describe(route, localizer))
                }
                shown += 1
            }
            if count.map({ shown >= $0 }) ?? false { break }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    static func describe(_ route: PushRoute, _ localizer: Localizer) -> String {
        let ru = localizer.language == "ru"
        switch route {
        case .chat(let chat, _): return (ru ? "открывает чат " : "opens the chat ") + chat.uuidString.lowercased().prefix(8)
        case .friends: return ru ? "открывает заявки в друзья" : "opens the friend requests"
        case .walletTransfer: return ru ? "открывает кошелёк" : "opens the wallet"
        case .moneyRequest: return ru ? "открывает запрос денег" : "opens the money request"
        }
    }
}

/// Ctrl-C (SIGINT) caught from its creation on: it then no longer ends the process at once, and
/// `next()` returns at the first one, even one pressed before it was called.
/// `@unchecked`: the signal source is set up in `init` and cancelled in `deinit`, never touched between.
private final class Interrupts: @unchecked Sendable {
    private let stream: AsyncStream<Void>
    private let source: any DispatchSourceSignal

    init() {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { continuation.yield() }
        source.resume()
        self.stream = stream
    }

    func next() async {
        var signals = stream.makeAsyncIterator()
        _ = await signals.next()
    }

    deinit { source.cancel() }
}
