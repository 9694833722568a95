import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseScreens
import GatehouseTestSupport
import Testing

/// One phone running the messenger app under test: the flow of view models over a real
/// server, its own network switch, session, offline stores and device preferences. Made again
/// with the same parts, it is the same phone relaunched.
@MainActor
struct MessengerApp {
    let flow: MessengerAppFlow
    let network: NetworkSwitch
    let sessions: any SessionStore
    let stores: MessengerStores
    let preferences: InMemoryPreferences

    /// The tab bar, once signed in.
    var main: MessengerMainViewModel {
        get throws {
            guard case .messenger(let main) = flow.state.screen else { throw LiveServerError("not in the messenger: \(flow.state.screen)") }
            return main
        }
    }

    var repository: MessengerRepository { get throws { try main.repository } }

    /// The screen on top of the selected tab, as `T`.
    func top<T>(_ type: T.Type = T.self, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        let route = try main.top
        let model = route?.model
        guard let typed = model as? T else { throw LiveServerError("expected \(T.self) on top, got \(String(describing: route))") }
        return typed
    }

    /// Launches (the splash decides where to go) and, when it lands in the messenger, waits until
    /// it is online (unless the network is off).
    func launch() async throws {
        await flow.launch()
        guard network.isOnline, case .messenger = flow.state.screen else { return }
        try await waitUntil("online") { try repository.connectivity == .online }
    }

    /// Waits for a condition on the main actor (live updates arrive on their own time).
    func waitUntil(_ what: String, within limit: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
                   _ condition: @escaping @MainActor () throws -> Bool) async throws {
        let met = await eventually(within: limit) { await MainActor.run { (try? condition()) ?? false } }
        if !met { throw LiveServerError("timed out waiting until \(what)") }
    }

    /// The same phone launched again: a new flow on the same session, stores and preferences.
    func relaunched(_ server: LiveServer) -> MessengerApp {
        server.messengerApp(network: network, sessions: sessions, stores: stores, preferences: preferences)
    }
}

extension LiveServer {
    /// A phone with the app installed, signed in with `signedIn`'s session when given.
    @MainActor
    func messengerApp(signedIn: AccountsClient? = nil, network: NetworkSwitch = NetworkSwitch(), sessions: (any SessionStore)? = nil,
                      stores: MessengerStores = .temporary(), preferences: InMemoryPreferences = InMemoryPreferences(),
                      language: String = "en", timeZone: TimeZone = TimeZone(identifier: "UTC")!) -> MessengerApp {
        let sessions = sessions ?? InMemorySessionStore(try? signedIn?.sessionStore.load())
        let client = AccountsClient(baseURL: baseURL, sessionStore: sessions, transport: network, language: language, now: { [clock] in clock.now })
        var configuration = MessengerRepository.Configuration()
        configuration.webSocketTransport = network
        configuration.backoff = .init(delays: [.milliseconds(50), .milliseconds(100)])
        let environment = MessengerEnvironment(client: client, localizer: Localizer(language: language), now: { [clock] in clock.now },
                                               tagCheckDelay: 0, device: "tests", stores: stores, repository: configuration,
                                               preferences: preferences, timeZone: timeZone)
        return MessengerApp(flow: MessengerAppFlow(environment: environment), network: network, sessions: sessions, stores: stores,
                            preferences: preferences)
    }

    /// A person and their phone, signed in and online.
    @MainActor
    func signedInApp(_ tag: String, firstName: String? = nil, timeZone: TimeZone = TimeZone(identifier: "UTC")!) async throws
        -> (app: MessengerApp, id: UUID, messenger: MessengerClient) {
        let user = try await messengerUser(tag, firstName: firstName)
        let app = messengerApp(signedIn: user.accounts, timeZone: timeZone)
        try await app.launch()
        _ = try app.main
        return (app, user.id, user.messenger)
    }
}

/// Two people who are friends, through the API.
func befriend(_ a: MessengerClient, _ aID: UUID, _ b: MessengerClient, _ bID: UUID) async throws {
    try await a.requestFriend(bID)
    try await b.requestFriend(aID)
}
