import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSurfaces
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

public typealias GatehouseApplication = Application<RouterResponder<GatehouseRequestContext>>

/// Builds a runnable server from a configuration value. Migrations run before the server
/// accepts connections when `runMigrationsOnStart` is set.
/// `onServerRunning` receives the port actually bound (useful with port 0).
public func buildApplication(
    configuration: GatehouseConfiguration,
    dependencies: GatehouseDependencies = .live,
    logger: Logger? = nil,
    onServerRunning: (@Sendable (Int) async -> Void)? = nil
) async throws -> GatehouseApplication {
    var log = logger ?? Logger(label: "gatehouse") { GatehouseLogHandler(label: $0, format: configuration.logFormat) }
    if logger == nil { log.logLevel = configuration.logLevel }
    let services = try GatehouseServices(configuration: configuration, dependencies: dependencies, logger: log)
    return buildApplication(services: services, onServerRunning: onServerRunning)
}

package func buildApplication(services: GatehouseServices, onServerRunning: (@Sendable (Int) async -> Void)? = nil) -> GatehouseApplication {
    GatehouseMetrics.bootstrapOnce()
    let configuration = services.configuration
    let router = makeRouter(services: services)
    let webSockets = WebSocketHost(
        endpoints: [
            CustomerGatewayEndpoint(login: services.login, settings: configuration.gateway, trustForwardedFor: configuration.trustForwardedFor, logger: services.logger),
            RealtimeEndpoint(hub: services.realtime, settings: configuration.messenger),
        ],
        shutdownGrace: .seconds(configuration.http.shutdownGrace)
    )
    // Behind a load balancer every connection comes from its address: no per-address cap then.
    let guardSettings = ConnectionGuard.Settings(configuration.http, perAddressCap: !configuration.trustForwardedFor)
    let addressCounts = ConnectionGuard.AddressCounts()
    // The database's instance lease (`InstanceLease`): taken before the migrations, given back after the database.
    // A session-level lock: behind a pooler in transaction mode, on the database itself.
    let lease = InstanceLeaseKeeper(location: configuration.sessionDatabase, logger: services.logger)
    var app = Application(
        router: router,
        server: HTTPServerBuilder { responder in
            ConnectionGuard.Channel(
                inner: HTTPAndWebSocketChannel(responder: responder, host: webSockets),
                settings: guardSettings, counts: addressCounts
            )
        },
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "Gatehouse"),
        // Stopped in reverse order once the HTTP server has: the WebSocket sessions' work, then the
        // deliverer, the HTTP client, the bus, and the database, so nothing queries it closed; the instance lease
        // after it, so a restore can begin only once this instance has stopped writing.
        services: [lease, services.database] + [services.bus as? any Service].compactMap { $0 }
            + [HTTPClientService(client: services.httpClient), HTTPClientService(client: services.webhookHTTPClient)] + (services.pushHTTPClient.map { [HTTPClientService(client: $0)] } ?? [])
            + [services.deliverer, webSockets],
        onServerRunning: { channel in await onServerRunning?(channel.localAddress?.port ?? 0) },
        logger: services.logger
    )
    app.beforeServerStarts {
        try await lease.take()
    }
    if configuration.runMigrationsOnStart {
        app.beforeServerStarts {
            try await services.migrate()
        }
    } else {
        app.beforeServerStarts {
            try await services.database.prepareEngine()
            services.database.markReady()
        }
    }
    // The key set is never empty: a verifier that fetches it before the first token finds the key that will sign it.
    app.beforeServerStarts {
        _ = try? await services.tokens.keys.signer()
    }
    return app
}

/// Every HTTP route of the server. Separate from the application so tests can compare the
/// routes with the OpenAPI document.
package func makeRouter(services: GatehouseServices) -> Router<GatehouseRequestContext> {
    let router = Router(context: GatehouseRequestContext.self)
    // What every request pays, in one layer: its id, its log line and metrics, no caching, U+0000 out of the query,
    // 405 with `Allow`, and errors as problem documents on the surfaces that speak them.
    let routes = RouteTable()
    router.add(middleware: EveryRequestMiddleware(routes: routes, surfaces: [.init(prefixes: ["/v1/", "/admin/"], answer: ProblemDocuments.response)]))
    let configuration = services.configuration
    let edge = SurfaceEdge(configuration)
    HealthController(ping: { [database = services.database] in try await database.ping() }, metrics: configuration.metricsEnabled, metricsToken: configuration.metricsToken).addRoutes(to: router)
    OpenAPIController().addRoutes(to: router)
    KeySetController(keys: services.tokens.keys).addRoutes(to: router)
    OpenIDController(provider: services.openID, login: services.login, passkeys: services.passkeys, sessions: services.sessions, edge: edge).addRoutes(to: router)
    PhoneAccountsController(signup: services.signup, login: services.login, recovery: services.recovery, profile: services.profile,
                            email: services.email, sessions: services.sessions, bearer: services.tokens.bearer, clients: services.clients, deliverer: services.deliverer,
                            limits: configuration.limits, edge: edge).addRoutes(to: router)
    // `/v1`: one controller per concept, behind the bearer-token middleware.
    let v1 = router.group().add(middleware: BearerSessionMiddleware(bearer: services.tokens.bearer))
    let answers = SessionAnswers(tokens: services.tokens, edge: edge)
    AccountsController(signup: services.signup, login: services.login, recovery: services.recovery, profile: services.profile,
                       email: services.email, avatars: services.avatars, deletion: services.accountDeletion, social: services.socialSignIn, answers: answers, limits: configuration.limits, edge: edge).addRoutes(to: v1)
    SessionsController(login: services.login, secondFactors: services.secondFactors, passkeys: services.passkeys, sessions: services.sessions, answers: answers,
                       limits: configuration.limits, edge: edge).addRoutes(to: v1)
    IdentitiesController(social: services.socialSignIn, login: services.login, answers: answers, limits: configuration.limits, edge: edge).addRoutes(to: v1)
    MessengerController(people: services.messenger.people, friends: services.messenger.friends, chats: services.messenger.chats, messages: services.messenger.messages,
                        attachments: services.messenger.attachments, limits: configuration.limits, messenger: configuration.messenger).addRoutes(to: v1)
    AppsController(apps: services.signToLogin.apps, limits: configuration.limits, signature: configuration.signature).addRoutes(to: v1)
    SignatureProfileController(profiles: services.signToLogin.profiles, limits: configuration.limits, signature: configuration.signature, edge: edge).addRoutes(to: v1)
    WalletController(wallets: services.wallet.wallets, requests: services.wallet.moneyRequests, topUps: services.wallet.topUps, limits: configuration.limits).addRoutes(to: v1)
    PaymentsController(topUps: services.wallet.topUps, limits: configuration.limits, wallet: configuration.wallet, edge: edge).addRoutes(to: router)
    AdminController(keys: services.adminKeys, clients: services.clients, accountImport: services.accountImport, accounts: services.accountAdministration, webhooks: services.webhooks, outbox: services.operatorOutbox, limits: configuration.limits, operators: configuration.operators, edge: edge).addRoutes(to: router)
    OperatorConsoleController(services: .init(
        operators: services.operators, sessions: services.sessions, login: services.login, locks: services.locks, email: services.email,
        recovery: services.recovery, clients: services.clients, wallets: services.wallet.wallets, topUps: services.wallet.topUps, apps: services.signToLogin.apps,
        signatures: services.signToLogin.signatures, audit: services.audit, outbox: services.operatorOutbox, secondFactors: services.secondFactors,
        passkeys: services.passkeys),
        defaultCountryCode: configuration.defaultCountryCode, operators: configuration.operators, edge: edge).addRoutes(to: router)
    ConsoleController(login: services.login, sessions: services.sessions, apps: services.signToLogin.apps, signature: configuration.signature, edge: edge).addRoutes(to: router)
    SignatureProfilePageController(profiles: services.signToLogin.profiles, sessions: services.sessions, signature: configuration.signature, edge: edge).addRoutes(to: router)
    SignToLoginController(apps: services.signToLogin.apps, signatures: services.signToLogin.signatures, documents: services.signToLogin.documents, signature: configuration.signature, edge: edge).addRoutes(to: router)
    if configuration.environment == .development {
        DevOutboxController(recent: { [database = services.database] in try await OutboxQuery.recent(database: database, to: $0, limit: $1) }, defaultCountryCode: configuration.defaultCountryCode).addRoutes(to: router)
    }
    routes.load(router.routes.map { (path: $0.path.description, method: $0.method) })
    return router
}
