import AsyncHTTPClient
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import GatehouseSignToLogin
import GatehouseSurfaces
import GatehouseWallet
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// Every service of one server instance, built once from the configuration and handed to the
/// surfaces. Tests build it directly to reach the clock-driven parts (the outbox deliverer).
package final class GatehouseServices: Sendable {
    package let configuration: GatehouseConfiguration
    package let dependencies: GatehouseDependencies
    package let logger: Logger
    package let database: DatabaseProvider
    package let sessions: SessionService
    package let verification: VerificationService
    /// The account services, one per concept, on one shared core.
    package let signup: SignupService
    package let login: LoginService
    package let recovery: RecoveryService
    package let profile: ProfileService
    package let email: EmailService
    package let avatars: AvatarService
    package let outbox: Outbox
    package let deliverer: OutboxDeliverer
    package let rateLimiter: RateLimiter
    package let httpClient: HTTPClient
    /// The push services' client (HTTP/2), when push is on.
    package let pushHTTPClient: HTTPClient?
    /// Webhooks' own client: no redirects, their timeout.
    package let webhookHTTPClient: HTTPClient
    /// The business's webhook endpoints (docs/webhooks.md).
    package let webhooks: WebhookEndpoints
    /// Push devices and whether pushes are sent (docs/push.md).
    package let pushDevices: PushDevices
    package let pushEnabled: Bool
    package let bus: any EventBus
    package let blobs: any BlobStore
    package let blobCollector: BlobCollector
    /// The messenger (docs/messenger.md): people, friends, chats, messages, attachments.
    package let messenger: MessengerModule
    package let realtime: RealtimeHub
    /// Sign To Login (docs/sign-to-login.md): apps, signatures, profiles, documents.
    package let signToLogin: SignToLoginModule
    /// The wallet (docs/wallet.md): wallets and transfers, money requests, top-ups through the
    /// payment provider (nil provider: top-ups are off).
    package let wallet: WalletModule
    /// Account deletion, with every app's part in it (docs/security.md, "Account deletion").
    package let accountDeletion: AccountDeletionService
    /// The audit trail (docs/operators.md).
    package let audit: AuditLog
    /// The operator's side: operators and their console sessions, admin keys, locks, client records (docs/operators.md).
    package let operators: Operators
    package let adminKeys: AdminKeys
    /// Signed tokens: their keys, access and refresh tokens, and the reading of a bearer token.
    package let tokens: TokensModule
    /// Accounts brought from another system with their password hashes.
    package let accountImport: AccountImport
    /// The admin API's reading and changing of accounts.
    package let accountAdministration: AccountAdministration
    /// The OpenID Connect provider: its clients, codes, consents and grants.
    package let openID: OpenIDProvider
    package let locks: AccountLocks
    /// Second factors and passkeys (docs/security.md).
    package let secondFactors: SecondFactors
    package let passkeys: Passkeys
    /// Sign in with Apple and Google (docs/social-login.md).
    package let socialSignIn: SocialSignIn
    package let clients: ClientRecords
    package let operatorOutbox: OperatorOutbox

    package init(configuration: GatehouseConfiguration, dependencies: GatehouseDependencies = .live, logger: Logger) throws {
        // Before any service makes its counters and gauges: one made earlier reports to nowhere
        // (the outbox's were, in every production process, until a parallel test run showed it).
        GatehouseMetrics.bootstrapOnce()
        self.configuration = configuration
        self.dependencies = dependencies
        self.logger = logger
        let clock = dependencies.clock
        let threadPool = NIOThreadPool.singleton
        let database = try DatabaseProvider(location: configuration.database, poolSize: configuration.databasePoolSize,
                                            poolTimeout: configuration.databasePoolTimeout, queryTimeout: configuration.databaseQueryTimeout,
                                            planCacheMode: configuration.databasePlanCacheMode, pooled: configuration.databaseDirect != nil,
                                            replicas: configuration.databaseReplicas,
                                            replicaSettings: .init(maxLag: configuration.replicaMaxLag, pinFor: configuration.replicaPin),
                                            threadPool: threadPool, logger: logger)
        self.database = database
        let secrets = Secrets(serverSecret: configuration.secret, random: dependencies.random)
        let rateLimiter = RateLimiter(database: database, clock: clock)
        self.rateLimiter = rateLimiter
        let signal = OutboxSignal()
        let outbox = Outbox(clock: clock, signal: signal)
        self.outbox = outbox
        let sessionCache = SessionCache(ttl: configuration.limits.sessionCacheTTL, maxAge: configuration.limits.sessionCacheMaxAge)
        let bus: any EventBus = if let url = configuration.eventBusURL, let address = RESPConnection.Address(url: url) {
            RedisEventBus(address: address, schema: database.postgres?.schema, silence: .seconds(configuration.eventBusSilence), logger: logger)
        } else if let postgres = database.postgres {
            // LISTEN holds a session: behind a pooler in transaction mode it connects to the database itself.
            // Its heartbeats show it hears (a silent listener connects again) and let a cached session outlive the
            // cache's TTL, which asks for them every half TTL; once a second otherwise.
            PostgresEventBus(database: database, configuration: try DatabaseProvider.connection(to: configuration.databaseDirect) ?? postgres.configuration,
                             schema: postgres.schema, heartbeat: sessionCache.heartbeat > .zero ? sessionCache.heartbeat : .seconds(1),
                             silence: .seconds(configuration.eventBusSilence), logger: logger)
        } else {
            InProcessEventBus()
        }
        self.bus = bus
        sessionCache.follow(bus)
        database.databases.middleware.use(AccountCacheInvalidation(cache: sessionCache, bus: bus))
        let sessions = SessionService(database: database, clock: clock, ttl: configuration.limits.sessionTTL, cache: sessionCache, bus: bus, random: dependencies.random)
        self.sessions = sessions
        let verification = VerificationService(
            database: database, clock: clock, limits: configuration.limits, secrets: secrets, outbox: outbox, rateLimiter: rateLimiter,
            smsCountries: configuration.effectiveSMSCountries
        )
        self.verification = verification
        // Our own client: a refused connection must fail the attempt at once (the outbox retries),
        // not be retried inside the client until the request's deadline.
        var httpConfiguration = HTTPClient.Configuration()
        httpConfiguration.connectionPool.retryConnectionEstablishment = false
        httpConfiguration.timeout.connect = .seconds(5)
        let httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: httpConfiguration)
        self.httpClient = httpClient
        let blobs: any BlobStore = if let s3 = configuration.storage.s3 {
            try S3BlobStore(settings: .init(endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, accessKey: s3.accessKey,
                                            secretKey: s3.secretKey, prefix: s3.prefix), client: httpClient)
        } else {
            try FileBlobStore(root: URL(fileURLWithPath: configuration.blobDirectory))
        }
        self.blobs = blobs
        let blobCollector = BlobCollector(store: blobs, database: database, grace: configuration.storage.collectorGrace, logger: logger)
        self.blobCollector = blobCollector
        let hasher = PasswordHasher(cost: configuration.passwords.bcryptCost, threadPool: PasswordHasher.sharedThreadPool)
        let passwordRules = PasswordRules(
            policy: configuration.passwords,
            common: configuration.passwords.refuseCommon ? try CommonPasswords.shipped() : nil,
            breaches: configuration.passwords.breachRangeURL.map {
                PwnedPasswordsRange(baseURL: $0, httpClient: httpClient, timeoutSeconds: configuration.passwords.breachTimeoutSeconds)
            },
            logger: logger
        )
        let composer = MessageComposer(publicURL: configuration.publicURL)
        let audit = AuditLog(database: database, clock: clock, retention: configuration.audit.retention,
                             failureWindow: configuration.audit.failureWindow)
        self.audit = audit
        // The account rules (no I/O) and the small capabilities the account services share; each
        // service is given the ones it uses.
        let rules = AccountRules(defaultCountryCode: configuration.defaultCountryCode, limits: configuration.limits)
        let accountStore = AccountStore(database: database)
        let clients = ClientRecords(database: database, clock: clock, sessions: sessions, defaultCountryCode: configuration.defaultCountryCode,
                                    maxRows: configuration.operators.importMaxRows)
        self.clients = clients
        let binding = ClientBinding(clients: clients, audit: audit)
        let codes = CodeIssuer(rules: rules, verification: verification, secrets: secrets)
        let notices = SecurityNotices(composer: composer)
        let proofs = AddressProofs(database: database, clock: clock, store: accountStore, verification: verification, sessions: sessions,
                                   outbox: outbox, composer: composer, audit: audit, binding: binding)
        let passwords = PasswordChanges(database: database, clock: clock, limits: configuration.limits, hasher: hasher, secrets: secrets,
                                        rateLimiter: rateLimiter, verification: verification, sessions: sessions, outbox: outbox, composer: composer,
                                        audit: audit, binding: binding)
        let pushDevices = PushDevices(database: database, clock: clock, maxPerAccount: configuration.delivery.push.devicesPerAccount)
        self.pushDevices = pushDevices
        let operators = Operators(database: database, clock: clock, hasher: hasher, secrets: secrets, rateLimiter: rateLimiter,
                                  settings: configuration.operators)
        self.operators = operators
        self.adminKeys = AdminKeys(database: database, clock: clock, random: dependencies.random)
        var tokenSettings = TokensModule.Settings(issuer: configuration.publicURL, audience: configuration.tokens.audience ?? configuration.publicURL,
                                                  accessTokenLifetime: configuration.tokens.accessTokenTTL, keyLifetime: configuration.tokens.signingKeyLifetime)
        tokenSettings.refresh.lifetime = configuration.tokens.refreshTokenTTL
        tokenSettings.refresh.reuseInterval = configuration.tokens.refreshReuseInterval
        let tokens = TokensModule.make(database: database, clock: clock, random: dependencies.random, secrets: secrets, audit: audit,
                                       sessions: sessions, settings: tokenSettings)
        self.tokens = tokens
        var openIDSettings = OpenIDProvider.Settings(issuer: configuration.publicURL)
        openIDSettings.codeLifetime = configuration.tokens.authorizationCodeTTL
        openIDSettings.idTokenLifetime = configuration.tokens.accessTokenTTL
        let openID = OpenIDProvider(database: database, clock: clock, random: dependencies.random, sessions: sessions, tokens: tokens, audit: audit,
                                    rateLimiter: rateLimiter, limits: configuration.limits, settings: openIDSettings)
        self.openID = openID
        self.locks = AccountLocks(database: database, clock: clock, store: accountStore, sessions: sessions, audit: audit)
        self.operatorOutbox = OperatorOutbox(database: database, clock: clock, outbox: outbox)
        let relyingParty = WebAuthnRelyingParty(id: configuration.passkeyRPID, origins: configuration.passkeyOrigins)
        let assertions = PasskeyAssertions(database: database, clock: clock, challengeTTL: configuration.passkeys.challengeTTL, relyingParty: relyingParty,
                                           accounts: accountStore, outbox: outbox, audit: audit, notices: notices)
        let secondFactors = SecondFactors(database: database, clock: clock, settings: configuration.secondFactors,
                                          loginFailureWindow: configuration.limits.loginFailureWindow, accounts: accountStore, secrets: secrets,
                                          rateLimiter: rateLimiter, outbox: outbox, audit: audit, notices: notices, passwords: passwords,
                                          assertions: assertions)
        self.secondFactors = secondFactors
        self.passkeys = Passkeys(database: database, clock: clock, settings: configuration.passkeys, relyingParty: relyingParty,
                                 recoveryUndoesWithin: configuration.secondFactors.recoveryUndoesWithin, accounts: accountStore, secrets: secrets,
                                 rateLimiter: rateLimiter, sessions: sessions, outbox: outbox, audit: audit, notices: notices, binding: binding,
                                 assertions: assertions, secondFactors: secondFactors)
        self.signup = SignupService(rules: rules, database: database, clock: clock, hasher: hasher, passwordRules: passwordRules, sessions: sessions,
                                    verification: verification, outbox: outbox, composer: composer, secrets: secrets, codes: codes, proofs: proofs,
                                    binding: binding, audit: audit)
        let login = LoginService(rules: rules, database: database, clock: clock, hasher: hasher, passwordRules: passwordRules, sessions: sessions,
                                  rateLimiter: rateLimiter, outbox: outbox, audit: audit, binding: binding, notices: notices, passwords: passwords,
                                  secondFactors: secondFactors)
        self.login = login
        let appleEndpoints = try AppleEndpoints(settings: configuration.identityProviders.apple, clock: clock,
                                                post: IdentityProviderKeys.poster(httpClient))
        self.socialSignIn = SocialSignIn(
            database: database, clock: clock, settings: configuration.identityProviders,
            verifiers: IdentityProviderKeys.verifiers(configuration.identityProviders, httpClient: httpClient, clock: clock), apple: appleEndpoints,
            secrets: secrets,
            sessions: sessions, secondFactors: secondFactors, login: login, proofs: proofs, outbox: outbox, audit: audit, notices: notices,
            recoveryUndoesWithin: configuration.secondFactors.recoveryUndoesWithin)
        self.recovery = RecoveryService(rules: rules, store: accountStore, hasher: hasher, passwordRules: passwordRules, verification: verification,
                                        composer: composer, secrets: secrets, codes: codes, notices: notices, passwords: passwords, audit: audit,
                                        secondFactors: secondFactors)
        self.profile = ProfileService(rules: rules, database: database, clock: clock, sessions: sessions, verification: verification, outbox: outbox,
                                      composer: composer, codes: codes, proofs: proofs, passwords: passwords, pushDevices: pushDevices, audit: audit)
        self.email = EmailService(rules: rules, database: database, clock: clock, verification: verification, outbox: outbox, composer: composer,
                                  secrets: secrets, codes: codes, proofs: proofs, passwords: passwords, audit: audit)
        self.avatars = AvatarService(database: database, clock: clock, limits: configuration.limits, blobs: blobs)
        let signToLogin = SignToLoginModule.make(database: database, clock: clock, settings: configuration.signature, limits: configuration.limits,
                                                 publicURL: configuration.publicURL, hasher: hasher, sessions: sessions, verification: verification,
                                                 composer: composer, secrets: secrets, rateLimiter: rateLimiter, blobs: blobs, codes: codes,
                                                 proofs: proofs, audit: audit, bus: bus)
        self.signToLogin = signToLogin

        let pushSettings = configuration.delivery.push
        // Pushes are written when a service can send them, or (development) the outbox keeps them.
        let pushOn = pushSettings.apns != nil || pushSettings.fcm != nil || configuration.environment == .development
        self.pushEnabled = pushOn
        let eventLog = EventLog(database: database, bus: bus, clock: clock, retention: configuration.messenger.eventRetention,
                                pusher: pushOn ? EventPushes(devices: pushDevices, outbox: outbox, composers: [MessengerPushes(clock: clock), WalletPushes()],
                                                             badges: { try await MessengerPushes.badges($0, on: $1) }, window: pushSettings.coalesceWindow) : nil)
        let personLoader = PersonLoader(database: database, publicURL: configuration.publicURL)
        let peopleIndex = PeopleIndexUpkeep(events: eventLog, people: personLoader)
        database.databases.middleware.use(peopleIndex)
        self.accountImport = AccountImport(database: database, clock: clock, rules: rules, audit: audit, upkeep: [peopleIndex])
        let messenger = MessengerModule.make(database: database, clock: clock, settings: configuration.messenger, publicURL: configuration.publicURL,
                                             rateLimiter: rateLimiter, blobs: blobs, events: eventLog, people: personLoader)
        self.messenger = messenger
        let attachments = messenger.attachments
        let topUpSettings = configuration.wallet.topUps
        let paymentProvider: (any PaymentProvider)? = switch topUpSettings.provider {
        case .stripe:
            StripeProvider(secretKey: topUpSettings.stripeSecretKey ?? "", webhookSecret: topUpSettings.webhookSecret ?? "", apiURL: topUpSettings.stripeAPIURL,
                           tolerance: topUpSettings.notificationTolerance, httpClient: httpClient, timeoutSeconds: topUpSettings.timeoutSeconds)
        case .local: LocalPaymentProvider(publicURL: configuration.publicURL, tolerance: topUpSettings.notificationTolerance)
        case .off: nil
        }
        let wallet = WalletModule.make(database: database, clock: clock, settings: configuration.wallet, publicURL: configuration.publicURL,
                                       defaultCountryCode: configuration.defaultCountryCode, rateLimiter: rateLimiter, events: eventLog, audit: audit,
                                       payments: messenger.payments, provider: paymentProvider, logger: logger)
        self.wallet = wallet
        let idempotencyKeys = wallet.keys
        self.realtime = RealtimeHub(log: eventLog, bearer: tokens.bearer, authTimeout: configuration.messenger.realtimeAuthTimeout, logger: logger)
        // Every app built on accounts takes part in deleting one; the accounts' own data goes last.
        let accountDeletion = AccountDeletionService(
            store: accountStore, database: database, clock: clock, sessions: sessions, passwords: passwords, audit: audit,
            participants: [SignToLoginDeletion(store: signToLogin.store, accounts: AccountStore(database: database)),
                           WalletDeletion(store: wallet.store), MessengerDeletion(store: messenger.store),
                           IdentityDeletion(database: database, outbox: outbox)],
            grace: configuration.limits.accountDeletionGrace
        )
        self.accountDeletion = accountDeletion
        self.accountAdministration = AccountAdministration(
            database: database, clock: clock, rules: rules, accountImport: accountImport, hasher: hasher, passwordRules: passwordRules, sessions: sessions,
            locks: locks, secondFactors: secondFactors, deletion: accountDeletion, recovery: recovery, audit: audit)

        let dev = DevDeliveryChannel(logger: logger)
        let smsChannel: any DeliveryChannel
        switch configuration.delivery.smsChannel {
        case .dev: smsChannel = dev
        case .smsHTTP: smsChannel = SMSHTTPChannel(settings: configuration.delivery.smsHTTP, httpClient: httpClient)
        }
        let emailChannel: any DeliveryChannel
        switch configuration.delivery.emailChannel {
        case .dev: emailChannel = dev
        case .smtp:
            let smtp = configuration.delivery.smtp
            let client = SMTPClient(
                configuration: SMTPConfiguration(
                    host: smtp.host, port: smtp.port, security: SMTPConfiguration.Security(rawValue: smtp.security) ?? .startTLS,
                    username: smtp.username, password: smtp.password, heloName: URL(string: configuration.publicURL)?.host ?? "localhost",
                    timeout: .seconds(Int64(smtp.timeoutSeconds)), caCertificatePath: smtp.caFile,
                    verifyCertificates: smtp.verifyCertificates, allowInsecureAuth: false
                ),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger
            )
            emailChannel = SMTPEmailChannel(client: client, from: configuration.delivery.emailFrom, fromName: configuration.delivery.emailFromName)
        }
        let pushChannel: any DeliveryChannel
        if pushSettings.apns != nil || pushSettings.fcm != nil {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let caFile = pushSettings.caFile { tls.additionalTrustRoots = [.file(caFile)] }
            var pushConfiguration = HTTPClient.Configuration(tlsConfiguration: tls)
            pushConfiguration.connectionPool.retryConnectionEstablishment = false
            pushConfiguration.timeout.connect = .seconds(10)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: pushConfiguration)
            self.pushHTTPClient = client
            let apns = try pushSettings.apns.map { try APNsClient(settings: $0, httpClient: client, timeoutSeconds: pushSettings.timeoutSeconds, logger: logger) }
            let fcm = try pushSettings.fcm.map { try FCMClient(settings: $0, httpClient: client, timeoutSeconds: pushSettings.timeoutSeconds, logger: logger) }
            pushChannel = PushChannel(apns: apns, fcm: fcm, onUnregistered: { [pushDevices, logger] device, token in
                do { try await pushDevices.removeUnregistered(device, token: token) } catch {
                    logger.warning("push: cannot remove an unregistered device: \(String(describing: error))")
                }
            })
        } else {
            self.pushHTTPClient = nil
            // In development pushes stay in the outbox, readable as SMS and mail are.
            pushChannel = dev
        }
        let webhooks = WebhookEndpoints(database: database, clock: clock, secrets: secrets, settings: configuration.delivery.webhooks)
        self.webhooks = webhooks
        let webhookHTTPClient = WebhookChannel.makeClient(settings: configuration.delivery.webhooks)
        self.webhookHTTPClient = webhookHTTPClient
        self.deliverer = OutboxDeliverer(
            database: database, clock: clock, settings: configuration.delivery, environment: configuration.environment,
            smsChannel: smsChannel, emailChannel: emailChannel, pushChannel: pushChannel,
            webhookChannel: WebhookChannel(endpoints: webhooks, client: webhookHTTPClient),
            revocationChannel: IdentityRevocationChannel(apple: appleEndpoints, secrets: secrets), signal: signal, logger: logger,
            composePushes: eventLog.pusher.map { pusher in
                let composition = PushComposition(database: database, clock: clock, pusher: pusher, settings: configuration.delivery.push, logger: logger)
                return { await composition.composeAll() }
            },
            maintenance: { [sessions, verification, rateLimiter, blobCollector, eventLog, attachments, idempotencyKeys, database, accountDeletion, audit, operators,
                            tokens, openID] in
                try await sessions.purgeExpired()
                try await verification.purgeExpired()
                try await rateLimiter.purgeExpired()
                try await eventLog.purgeExpired()
                try await audit.purgeExpired()
                try await operators.purgeExpired()
                try await idempotencyKeys.purgeExpired(on: database.db)
                try await attachments.purgeUnsent()
                try await accountDeletion.eraseDue()
                try await blobCollector.runIfDue()
                try await tokens.keys.rotateIfDue()
                try await tokens.refresh.purgeExpired()
                try await openID.purgeExpired()
            }
        )
    }
}

extension GatehouseServices {
    /// Migrations, then the data moves they imply (avatars into the blob store).
    package func migrate() async throws {
        guard let direct = configuration.databaseDirect else {
            try await database.migrate(GatehouseMigrations.all)
            try await AvatarMove(database: database, store: blobs).run()
            return
        }
        // Behind a pooler in transaction mode, on a connection to the database itself: a migration's
        // statements then share one session, whatever the pooler would have done with them.
        let session = try DatabaseProvider(location: direct, poolSize: 1, poolTimeout: configuration.databasePoolTimeout,
                                           queryTimeout: configuration.databaseQueryTimeout, threadPool: .singleton, logger: logger)
        do {
            try await session.migrate(GatehouseMigrations.all)
            try await AvatarMove(database: session, store: blobs).run()
        } catch {
            await session.shutdown()
            throw error
        }
        await session.shutdown()
        database.markReady()
    }

    /// For commands that use the services without running the application.
    package func shutdownOutsideApplication() async {
        try? await httpClient.shutdown()
        try? await pushHTTPClient?.shutdown()
        try? await webhookHTTPClient.shutdown()
        await database.shutdown()
    }
}

/// Shuts the shared HTTP client down after the deliverer has stopped.
package struct HTTPClientService: Service {
    package let client: HTTPClient
    package func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
