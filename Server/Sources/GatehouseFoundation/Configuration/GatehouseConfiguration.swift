import Foundation
import GatehouseAPI
import Logging

/// Everything the server needs to start, as one value. `buildApplication(configuration:)`
/// reads nothing else; tests build their own.
public struct GatehouseConfiguration: Sendable {
    public enum Environment: String, Sendable { case development, production }

    public enum DatabaseLocation: Sendable, Equatable {
        case sqlite(path: String)
        case postgres(url: String, searchPath: String? = nil)
    }

    /// PostgreSQL's `plan_cache_mode`, as it spells the values.
    public enum PlanCacheMode: String, Sendable, CaseIterable {
        case auto
        case forceGenericPlan = "force_generic_plan"
        case forceCustomPlan = "force_custom_plan"
    }

    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var environment: Environment = .development
    public var database: DatabaseLocation = .sqlite(path: "gatehouse.sqlite")
    /// PostgreSQL itself when `database` is a pooler in transaction mode (PgBouncer's
    /// `pool_mode = transaction`; `GATEHOUSE_DATABASE_DIRECT_URL`): what needs a session of its own
    /// connects here (the event bus's LISTEN, the instance lease's advisory lock, migrations, backups
    /// and restores), and the pooled connections run no statement prepared by name (a pooler in
    /// transaction mode hands each transaction whichever server connection is free, where that name
    /// may not exist). Nil: `database` is PostgreSQL itself (or SQLite) and serves everything.
    public var databaseDirect: DatabaseLocation?
    /// PostgreSQL streaming replicas of `database` (`GATEHOUSE_DATABASE_REPLICA_URLS`, comma-separated)
    /// that serve the reads which tolerate a little lag (`ReadReplicas`); none by default.
    public var databaseReplicas: [DatabaseLocation] = []
    /// A replica further behind than this serves nothing until it catches up (`GATEHOUSE_REPLICA_MAX_LAG_SECONDS`).
    public var replicaMaxLag: TimeInterval = 1
    /// How long a person who asked for a change reads the primary (`GATEHOUSE_REPLICA_PIN_SECONDS`, at least the lag).
    public var replicaPin: TimeInterval = 5
    /// Base of links in mails, without a trailing slash.
    public var publicURL: String = "http://127.0.0.1:8080"
    /// PostgreSQL connections per event loop (SQLite always uses one connection).
    public var databasePoolSize: Int = 4
    /// How long a request waits for a pooled PostgreSQL connection before it fails. While the
    /// database is away, requests beyond the pool's size wait this long (AsyncKit serves its
    /// wait list only when a connection opens), so it bounds the answer time of an outage.
    public var databasePoolTimeout: TimeInterval = 3
    /// Longest one database operation may take before it fails (and its request gets an answer).
    public var databaseQueryTimeout: TimeInterval = 15
    /// How PostgreSQL plans the server's statements (`plan_cache_mode`, sent when each
    /// connection opens). `auto` leaves the database's own setting (PostgreSQL's default: its
    /// own choice per statement); `force_generic_plan` plans a prepared statement once per
    /// connection, where PostgreSQL's choice plans the wallet's batch statements again on every
    /// run, under the wallets' locks (docs/decisions.md, "Generic plans").
    public var databasePlanCacheMode: PlanCacheMode = .auto
    /// The bus that tells every instance what changed: nil for the database's own (PostgreSQL's
    /// LISTEN/NOTIFY; in process on SQLite), or a Redis server's address
    /// (`redis://[user:password@]host[:port][/db]`, `GATEHOUSE_EVENT_BUS`).
    public var eventBusURL: String?
    /// How long PostgreSQL's listener may go without hearing a heartbeat the database took before it
    /// connects again, through a gap (`PostgresEventBus`).
    public var eventBusSilence: TimeInterval = 15
    public var runMigrationsOnStart: Bool = true
    public var logLevel: Logger.Level = .info
    /// `text` (one line as swift-log writes it) or `json` (one JSON object per line, for a log pipeline).
    public var logFormat: LogFormat = .text
    /// Secret used to key the hashes of short one-time codes. Required in production.
    public var secret: String = "gatehouse-development-secret-do-not-use-in-production"
    /// Trust `X-Forwarded-For` from a load balancer for the client address.
    public var trustForwardedFor: Bool = false
    public var metricsEnabled: Bool = true
    /// When set, `/metrics` answers only `Authorization: Bearer <token>`.
    public var metricsToken: String?
    /// Development mode (with `/dev/outbox`) on a non-loopback address needs this on purpose.
    public var allowDevelopmentOnNetwork: Bool = false
    /// Production with codes and mails kept in the outbox (`GATEHOUSE_ALLOW_DEV_DELIVERY=true`): an explicit,
    /// loudly announced choice, never a default (nobody could sign up or restore a password).
    public var allowDevelopmentDelivery: Bool = false
    /// Country calling codes SMS may be sent to; empty means the default country's only.
    public var smsCountries: [String] = []
    public var http = HTTP()
    public var storage = Storage()

    /// Where blobs (avatars, later attachments and documents) live: a folder by default, an
    /// S3-compatible bucket when `GATEHOUSE_S3_BUCKET` is set (several instances need a bucket).
    public struct Storage: Sendable {
        /// The folder of the embedded store; nil: `<database file>.blobs` beside the SQLite file,
        /// or `gatehouse-blobs` on PostgreSQL.
        public var directory: String?
        public var s3: S3?
        /// A blob no row names is deleted once it has not been stored again for this long.
        public var collectorGrace: TimeInterval = 3_600

        public struct S3: Sendable {
            public var endpoint: String
            public var bucket: String
            public var region: String = "us-east-1"
            public var accessKey: String
            public var secretKey: String
            public var prefix: String = "blobs/"
            public init(endpoint: String, bucket: String, accessKey: String, secretKey: String) {
                self.endpoint = endpoint
                self.bucket = bucket
                self.accessKey = accessKey
                self.secretKey = secretKey
            }
        }
        public init() {}
    }

    /// The embedded blob folder in effect.
    package var blobDirectory: String {
        if let directory = storage.directory { return directory }
        if case .sqlite(let path) = database { return path + ".blobs" }
        return "gatehouse-blobs"
    }

    /// Connection-level limits of the HTTP server (docs/security.md, "Slow clients").
    public struct HTTP: Sendable {
        /// A request's head must arrive within this long of the connection or the previous response.
        public var headerTimeout: TimeInterval = 10
        /// A request body may stall this long (after its head, then between its parts).
        public var bodyTimeout: TimeInterval = 30
        /// A keep-alive connection with no request in flight is closed after this long.
        public var idleTimeout: TimeInterval = 60
        /// Open connections from one client address; more are closed at once.
        public var maxConnectionsPerAddress: Int = 256
        /// After SIGTERM, in-flight requests get this long; then every connection is closed.
        public var shutdownGrace: TimeInterval = 10
        /// Swift's tasks run on the server's event loops instead of a pool of their own (`gatehouse serve` only;
        /// docs/decisions.md, "sixth look"): a request's handler, its database connection and its answer on one thread.
        public var tasksOnEventLoops: Bool = true
        public init() {}
    }

    /// The SMS countries in effect: the configured list or the default country.
    package var effectiveSMSCountries: [String] { smsCountries.isEmpty ? [defaultCountryCode] : smsCountries }

    public var delivery = Delivery()
    public var gateway = Gateway()
    public var limits = Limits()
    public var messenger = Messenger()
    /// The wallet (docs/wallet.md).
    public var wallet = Wallet()
    /// The Sign To Login service (docs/sign-to-login.md).
    public var signature = Signature()
    /// The audit trail (docs/operators.md).
    public var audit = Audit()
    /// The operator console and the admin API (docs/operators.md).
    public var operators = Operators()
    public var tokens = Tokens()
    public var passwords = PasswordPolicy()
    /// Second factors: the authenticator app, recovery codes (docs/security.md, "Second factors").
    public var secondFactors = SecondFactors()
    /// Passkeys (WebAuthn): the relying party and its origins (docs/security.md, "Passkeys").
    public var passkeys = Passkeys()
    /// Sign in with Apple and Google (docs/social-login.md): off unless a provider's client ids are set.
    public var identityProviders = IdentityProviders()
    public var defaultCountryCode: String = "7"

    public struct Delivery: Sendable {
        public enum EmailChannel: String, Sendable { case dev, smtp }
        public enum SMSChannel: String, Sendable { case dev, smsHTTP = "sms-http" }
        public var emailChannel: EmailChannel = .dev
        public var smsChannel: SMSChannel = .dev
        public var emailFrom: String = "no-reply@gatehouse.local"
        public var emailFromName: String = "Gatehouse"
        public var smtp = SMTPSettings()
        public var smsHTTP = SMSHTTPSettings()
        public var push = Push()
        /// How often the deliverer looks for due messages when nobody wakes it.
        public var pollInterval: Duration = .seconds(1)
        /// First retry delay; doubles per attempt up to `maxRetryDelay`.
        public var retryBaseDelay: TimeInterval = 5
        public var maxRetryDelay: TimeInterval = 600
        public var maxAttempts: Int = 50
        /// How long `POST /api/users/sms` waits to report a gateway's refusal.
        public var firstAttemptWait: Duration = .seconds(3)
        /// The shortest claim of a due message (`OutboxDeliverer.claimDuration`: at least twice the longest attempt).
        public var claimFloor: TimeInterval = 120
        public var webhooks = Webhooks()
        public init() {}
    }

    /// Webhooks to the business's systems (docs/webhooks.md): Standard Webhooks, signed, through the outbox.
    public struct Webhooks: Sendable {
        /// How long one attempt may take, connecting, sending and answering.
        public var timeout: TimeInterval = 10
        /// The waits before each attempt after the first, in seconds; after the last failed attempt the delivery is
        /// dead (kept, retried by hand). Standard Webhooks' and Svix's schedule: about 28 hours in all.
        public var retrySchedule: [TimeInterval] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]
        /// Endpoints at loopback, private, link-local or other non-public addresses are refused unless this is set.
        public var allowPrivateAddresses = false
        /// Endpoints over plain `http` are refused unless this is set (development's default).
        public var allowHTTP = false
        /// How long a replaced secret still signs beside the new one.
        public var secretOverlap: TimeInterval = 86_400
        /// The most of an endpoint's answer read (kept: its first 500 characters).
        public var maxResponseBytes = 65_536
        /// How many enabled endpoints there may be.
        public var maxEndpoints = 50
        public init() {}
    }

    /// Push notifications (docs/push.md): Apple's and Google's push services. Without their keys
    /// push is off (and says so at start-up); in development pushes stay in the outbox.
    public struct Push: Sendable {
        public struct APNs: Sendable {
            /// The `.p8` key's PEM text, its key id and the team id.
            public var privateKeyPEM: String
            public var keyID: String
            public var teamID: String
            public var productionEndpoint: String = "https://api.push.apple.com"
            public var sandboxEndpoint: String = "https://api.sandbox.push.apple.com"
            public init(privateKeyPEM: String, keyID: String, teamID: String) {
                self.privateKeyPEM = privateKeyPEM
                self.keyID = keyID
                self.teamID = teamID
            }
        }
        public struct FCM: Sendable {
            /// The service account's JSON (`project_id`, `client_email`, `private_key`, `token_uri`).
            public var serviceAccountJSON: String
            public var endpoint: String = "https://fcm.googleapis.com"
            public init(serviceAccountJSON: String) {
                self.serviceAccountJSON = serviceAccountJSON
            }
        }
        public var apns: APNs?
        public var fcm: FCM?
        /// Extra trust roots (PEM) for the push services' TLS, as behind an inspecting proxy.
        public var caFile: String?
        public var timeoutSeconds: Int = 15
        /// Devices one account may register.
        public var devicesPerAccount: Int = 10
        /// A push waits this long before it is sent; a newer one for the same device and chat
        /// meanwhile replaces it (a burst of messages is one push).
        public var coalesceWindow: TimeInterval = 2
        /// Queued pushes (docs/push.md, "When a push is written") composed in one transaction.
        public var queueBatch: Int = 200
        /// A queued push whose composition failed this many times is dropped, with an error in the log.
        public var queueMaxAttempts: Int = 5
        /// A queued push older than this is dropped unsent, as APNs drops one past its expiration (a day).
        public var queueMaxAge: TimeInterval = 86_400
        public init() {}
    }

    public struct SMTPSettings: Sendable {
        public var host: String = "localhost"
        public var port: Int = 587
        public var security: String = "starttls"
        public var username: String?
        public var password: String?
        public var caFile: String?
        public var verifyCertificates: Bool = true
        public var timeoutSeconds: Int = 30
        public init() {}
    }

    public struct SMSHTTPSettings: Sendable {
        public var url: String = ""
        public var method: String = "POST"
        /// Extra headers, `Name: value` pairs separated by newlines.
        public var headers: [(String, String)] = []
        public var contentType: String = "application/json"
        /// Body with `{{to}}`, `{{text}}` and `{{code}}` placeholders, escaped for `contentType`.
        public var bodyTemplate: String = #"{"to":"{{to}}","text":"{{text}}"}"#
        public var timeoutSeconds: Int = 10
        public init() {}
    }

    /// The WebSocket login gateway (`/customer-gateway/customer`).
    public struct Gateway: Sendable {
        /// Largest frame accepted; a bigger one closes the connection with 1009.
        public var maxFrameBytes: Int = 16_384
        /// Ping period; a peer that does not answer is disconnected.
        public var pingInterval: Duration = .seconds(30)
        /// A connection that sends nothing for this long is closed.
        public var idleTimeout: Duration = .seconds(300)
        /// After the server's close frame, how long the peer has to answer with its own before the socket is closed.
        public var closeTimeout: Duration = .seconds(5)
        /// Connections served at once by this instance; more are closed with 1013 (try again later).
        public var maxConnections: Int = 100_000
        /// Requests answered concurrently on one connection.
        public var maxInFlightPerConnection: Int = 64
        /// Failed logins one connection may make before it is refused further attempts.
        public var failuresPerConnection: Int = 10
        public init() {}
    }

    /// The audit trail (docs/operators.md, "The audit trail").
    public struct Audit: Sendable {
        /// How long events are kept.
        public var retention: TimeInterval = 365 * 86_400
        /// Failed logins are counted in one row per account, client address and window this long.
        public var failureWindow: TimeInterval = 3_600
        public init() {}
    }

    /// The operator console and the admin API (docs/operators.md, "The console").
    public struct Operators: Sendable {
        /// A console session ends after this long without a request…
        public var sessionIdle: TimeInterval = 30 * 60
        /// …and this long after sign-in, whatever.
        public var sessionMax: TimeInterval = 8 * 3_600
        /// Failed console sign-ins per operator name, and per client address, in `signInWindow`.
        public var signInFailuresPerName: Int = 5
        public var signInFailuresPerIP: Int = 50
        public var signInWindow: TimeInterval = 15 * 60
        /// The largest client-record file the console and the admin API take.
        public var importMaxBytes: Int = 32 * 1_048_576
        /// The largest account file the admin API takes in one call (the CLI takes any).
        public var accountImportMaxBytes: Int = 256 * 1_048_576
        /// The most rows one import of client records takes.
        public var importMaxRows: Int = 100_000
        public init() {}
    }

    /// The tokens other services verify (docs/oidc.md).
    public struct Tokens: Sendable {
        /// An access token's lifetime: how long a token outlives its session at an offline verifier.
        public var accessTokenTTL: TimeInterval = 600
        /// A signing key signs this long before the schedule makes the next one.
        public var signingKeyLifetime: TimeInterval = 90 * 86_400
        /// `aud` of the access tokens a sign-in answers: the API that accepts them (nil: the public URL).
        public var audience: String?
        /// A refresh token unused this long expires.
        public var refreshTokenTTL: TimeInterval = 30 * 86_400
        /// A refresh token exchanged again within this is a client racing itself, not a theft.
        public var refreshReuseInterval: TimeInterval = 10
        /// How long the OpenID Connect provider's authorization code waits for its exchange.
        public var authorizationCodeTTL: TimeInterval = 60
        public init() {}
    }

    /// The Sign To Login service (docs/sign-to-login.md, "Limits").
    public struct Signature: Sendable {
        /// Apps one account may register.
        public var appsPerAccount: Int = 20
        /// Largest app icon, in bytes.
        public var appIconMaxBytes: Int = 1_048_576
        /// Signatures an enrolment takes (the spec's 10).
        public var enrolmentSignatures: Int = 10
        /// How long the accepted signatures of an unfinished enrolment are kept for the missing ones.
        public var enrolmentKeep: TimeInterval = 3_600
        /// Authentication attempts that scored below the app's threshold, in `attemptWindow`: per
        /// account and app (attempts without one of the person's sessions), per session of the
        /// person (their own signed-in device), and per client address.
        public var attemptsPerAccount: Int = 20
        public var attemptsPerSession: Int = 20
        public var attemptsPerIP: Int = 200
        public var attemptWindow: TimeInterval = 900
        /// `/login/` and `/opendocument/` lookups per client address and per app, in `attemptWindow`.
        public var lookupsPerIP: Int = 300
        public var lookupsPerApp: Int = 20_000
        /// An attempt at or above this similarity signs the person in and may sign a document
        /// (an app may set a higher one of its own).
        public var acceptAt: Double = 0.5
        /// An attempt closer than this to a reference or an earlier attempt is a replay (the mean
        /// point distance in units of the signature's size; `ReplayDetector`).
        public var replayDistance: Double = 0.003
        /// How many of the account's latest attempts a new one is compared with for replays.
        public var replayHistory: Int = 50
        /// How many prepared signature models an instance keeps in memory (about 60 KB each).
        public var modelCache: Int = 10_000
        /// How long an instance answers an app's key from memory (0 = off, at most 1 s); also the
        /// longest a key disabled or rotated by another instance whose event is lost still works here.
        public var appCacheTTL: TimeInterval = 0.5
        /// Largest request body of the spec's endpoints, largest photo, most points in one signature.
        public var maxBodyBytes: Int = 4_194_304
        public var photoMaxBytes: Int = 2_097_152
        public var maxPointsPerSignature: Int = 5_000
        /// A signing in a document's history below this similarity carries a low-match warning, as
        /// does one below the threshold of the app it was made through (docs/security.md, "Low-match signings").
        public var warnBelow: Double = 0.5
        /// The least similarity an attempt may sign a document with (the person's own session signs;
        /// below the app's threshold it is kept with a warning): what stops a scribble.
        public var signFloor: Double = 0.3
        /// Where the history page sends an iPhone or iPad without the app (the spec's App Store link).
        public var appStoreURL = "itms-apps://itunes.com/apps/signtologin/"
        public init() {}
    }

    /// The messenger (docs/messenger.md, "Limits").
    public struct Messenger: Sendable {
        /// Longest message text, in characters.
        public var maxTextLength: Int = 4_096
        /// How long after sending its author may edit a message.
        public var editWindow: TimeInterval = 48 * 3_600
        /// Messages (sent or forwarded copies) one account may send per minute.
        public var messagesPerMinute: Int = 120
        /// Edits one account may make per minute and per day (each is an event for every member).
        public var editsPerMinute: Int = 30
        public var editsPerDay: Int = 1_000
        /// Friend requests one account may send per day.
        public var friendRequestsPerDay: Int = 100
        /// New requests one account may make to the same person per day (a request/cancel cycle is one).
        public var friendRequestsPerPersonPerDay: Int = 3
        /// People one account may block.
        public var blocksPerAccount: Int = 1_000
        /// Largest attachment, in bytes.
        public var attachmentMaxBytes: Int = 20 * 1_048_576
        /// A download is read from the blob store and sent this many bytes at a time.
        public var downloadChunkBytes: Int = 65_536
        /// Attachments on one message.
        public var attachmentsPerMessage: Int = 10
        /// Attachments one account may upload per hour.
        public var uploadsPerHour: Int = 200
        /// Chats one forward may go to.
        public var forwardMaxChats: Int = 20
        /// Items per page when the request does not say, and the most it may ask for.
        public var pageSize: Int = 50
        public var maxPageSize: Int = 200
        /// How long events are kept for clients to resume from (older: `resync`).
        public var eventRetention: TimeInterval = 7 * 86_400
        /// Send contexts (a chat and its author: the other member, their audience, the friendship,
        /// whether they have a device) an instance remembers, so that a plain send need not read
        /// them first (the statement that writes it checks them); about 150 bytes each, 0 keeps none.
        public var sendContexts: Int = 50_000
        /// Direct chats (a pair of people and their chat's id) an instance remembers for the
        /// payments it writes as one statement, so that a batch of transfers need not read them
        /// first (the statement checks them: `PaymentMessages.existingChats`); about 100 bytes
        /// each, 0 keeps none.
        public var paymentChats: Int = 50_000
        /// How long the writer of sends waits for more before it writes a batch that sends coming
        /// at the recent pace would at least double (`GroupCommit.linger`; zero never waits). Sends
        /// fewer than one a linger apart never wait: at the default, below 100 a second.
        public var sendLinger: Duration = .milliseconds(10)
        /// Largest frame a realtime client may send (it sends only its `auth` frame); more closes with 1009.
        public var realtimeMaxFrameBytes: Int = 4_096
        /// Realtime sockets (`/v1/realtime`) this instance serves at once.
        public var realtimeMaxConnections: Int = 100_000
        /// Ping period of a realtime socket; a peer that does not answer is disconnected.
        public var realtimePingInterval: Duration = .seconds(30)
        /// A realtime socket sends nothing to the server normally: it is closed after this long without a frame from the client.
        public var realtimeIdleTimeout: Duration = .seconds(86_400)
        /// Time a client without an `Authorization` header has to send its `auth` frame.
        public var realtimeAuthTimeout: Duration = .seconds(10)
        public init() {}
    }

    public struct Wallet: Sendable {
        /// Largest single transfer or request, in kopecks.
        public var maxTransfer: Int64 = 15_000_000
        /// Most a wallet may pay out in one day (UTC), in kopecks.
        public var dailyLimit: Int64 = 60_000_000
        /// How long a money request stays open.
        public var requestTTL: TimeInterval = 7 * 86_400
        /// How long an `Idempotency-Key` is remembered.
        public var idempotencyKeyTTL: TimeInterval = 86_400
        /// Longest comment, in characters.
        public var maxComment: Int = 500
        /// Recipient lookups (`GET /v1/wallet/recipients`) one account may make per hour.
        public var lookupsPerHour: Int = 300
        /// Money requests one account may make per day.
        public var requestsPerDay: Int = 200
        /// Most transfers one transaction writes (group commit; 1 writes each on its own).
        public var transfersPerCommit: Int = 64
        /// Most batches of transfers written at once, each its own transaction and connection.
        public var commitWriters: Int = 2
        /// Transfers waiting before a writer beyond the first starts (`GroupCommit.backlog`): below
        /// it one writer takes them all in its next batch.
        public var commitBacklog: Int = 16
        /// On PostgreSQL, a batch of transfers to payees with no push device as one statement with
        /// no transaction around it (docs/wallet.md, "Group commit"); false: every batch in a
        /// transaction.
        public var transfersInOneStatement = true
        /// Money in through a payment provider (docs/wallet.md, "Money in").
        public var topUps = TopUps()
        public init() {}

        /// Top-ups: a payment at the provider, credited by its signed notification.
        public struct TopUps: Sendable {
            /// Who takes the payments: Stripe (Checkout Sessions and signed webhooks), the local
            /// stand-in of development mode (its confirmation page on this server), or nobody.
            public enum Provider: String, Sendable, CaseIterable { case stripe, local, off }
            public var provider: Provider = .off
            /// Stripe's secret API key (`sk_…`).
            public var stripeSecretKey: String?
            /// The webhook endpoint's signing secret (`whsec_…`); the local provider signs with its own.
            public var webhookSecret: String?
            /// Stripe's API, replaceable for a test double or a proxy.
            public var stripeAPIURL: String = "https://api.stripe.com"
            /// A notification's signed time may differ from ours by this much (Stripe's default).
            public var notificationTolerance: TimeInterval = 300
            /// Where the provider sends the person back after paying or giving up; `{id}` is the top-up's id.
            public var returnURL: String?
            /// Smallest and largest top-up, in kopecks.
            public var minAmount: Int64 = 100
            public var maxAmount: Int64 = 15_000_000
            /// Top-ups one account may start per day.
            public var perDay: Int = 20
            /// How long the provider waits for a call.
            public var timeoutSeconds: Int = 30
            public init() {}
        }
    }

    public struct Limits: Sendable {
        public var codeLength: Int = 6
        public var codeTTL: TimeInterval = 600
        public var codeMaxAttempts: Int = 5
        public var resendCooldown: TimeInterval = 60
        public var smsPerPhonePerDay: Int = 5
        public var emailsPerAddressPerDay: Int = 10
        public var codeRequestsPerIP: Int = 30
        public var codeRequestsPerIPWindow: TimeInterval = 300
        public var loginFailuresPerAccount: Int = 10
        public var loginFailuresPerIP: Int = 100
        public var loginFailureWindow: TimeInterval = 900
        public var sessionTTL: TimeInterval = 86_400
        /// How long an instance may serve a session and its account from memory (0 turns it off).
        /// Also the most a session revoked on another instance can still be used here.
        public var sessionCacheTTL: TimeInterval = 0.5
        /// How long a cached session may live while PostgreSQL's event bus proves, every half TTL,
        /// that it has missed no event (`SessionCache`); the bound for a change no event tells of.
        /// At most `sessionCacheTTL` when not above it (0: the TTL alone).
        public var sessionCacheMaxAge: TimeInterval = 30
        public var confirmationLinkTTL: TimeInterval = 86_400
        public var temporaryPasswordTTL: TimeInterval = 3_600
        /// How long after a deletion request the account's personal data is erased; a password
        /// login before then cancels it (30 days, as Apple's and Google's own accounts allow).
        public var accountDeletionGrace: TimeInterval = 2_592_000
        public var maxBodyBytes: Int = 1_048_576
        public var maxFieldLength: Int = 256
        /// Largest avatar image `PUT /v1/me/avatar` takes.
        public var avatarMaxBytes: Int = 2_097_152
        /// Code requests one client address may make for one destination per 24 h: a stranger
        /// cannot spend the whole daily SMS budget of somebody else's phone.
        public var codeRequestsPerAddressPerDestination: Int = 3
        /// A session opened with the password this recently counts as proof of it for the
        /// phone-first API's email change (the spec's client sends no password there).
        public var recentLoginWindow: TimeInterval = 600
        public init() {}
    }

    public struct PasswordPolicy: Sendable {
        public var minLength: Int = 6
        public var maxLength: Int = 72
        public var requireDigit: Bool = true
        public var requireSpecial: Bool = true
        public var bcryptCost: Int = 10
        /// Refuse new passwords found in the list of common and breached passwords shipped with the server.
        public var refuseCommon: Bool = true
        /// A server speaking Have I Been Pwned's range API (`https://api.pwnedpasswords.com`); nil: not asked.
        public var breachRangeURL: String?
        /// A password seen in breaches at least this often is refused.
        public var breachMinimumCount: Int = 1
        /// How long a range request may take; past it (or on any failure) the password is judged without it.
        public var breachTimeoutSeconds: Int = 3
        public init() {}
    }

    public struct SecondFactors: Sendable {
        /// How long the challenge of a password login waits for its second step.
        public var challengeTTL: TimeInterval = 300
        /// Wrong codes one challenge takes before it is spent (the password must be given again).
        public var attemptsPerChallenge: Int = 5
        /// Wrong second-factor codes one account takes per login failure window, across challenges.
        public var failuresPerAccount: Int = 10
        /// How long a new authenticator secret waits for its first code.
        public var enrolmentTTL: TimeInterval = 900
        /// The name authenticator apps show beside the account.
        public var issuer: String = "Gatehouse"
        /// A recovery by email or SMS removes the second factors and passkeys added this long before
        /// it (`GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS`, 7): the way to undo one a password thief
        /// added, which the notice of the new factor names.
        public var recoveryUndoesWithin: TimeInterval = 7 * 86_400
        public init() {}
    }

    public struct Passkeys: Sendable {
        /// The relying party id: the domain passkeys are bound to (nil: `PUBLIC_URL`'s host).
        public var rpID: String?
        /// The name the platform shows ("Sign in to Gatehouse").
        public var rpName: String = "Gatehouse"
        /// The origins whose pages and apps may use them: web origins (`https://id.example.com`) and
        /// apps' (`ios:bundle-id:com.example.app`, `android:apk-key-hash:…`); empty: `PUBLIC_URL`'s origin.
        public var origins: [String] = []
        /// How long a ceremony's challenge lives.
        public var challengeTTL: TimeInterval = 300
        /// Passkeys one account may have.
        public var perAccount: Int = 10
        /// Login options one client address may ask for per 5 minutes (each writes a challenge).
        public var optionsPerIP: Int = 100
        public init() {}
    }

    public struct IdentityProviders: Sendable {
        /// Sign in with Apple: on when `clientIDs` holds the app's bundle ids (and web service ids).
        public var apple = Apple()
        /// Sign in with Google: on when `clientIDs` holds the app's OAuth client ids.
        public var google = Google()
        /// How far a token's `exp` and `iat` may be off this server's clock.
        public var skew: TimeInterval = 60
        /// A provider's key set is kept as its `Cache-Control: max-age` says, never less than `keysLeastAge`, never
        /// more than `keysMostAge`; `keysUnsaidAge` when it says nothing.
        public var keysLeastAge: TimeInterval = 60
        public var keysMostAge: TimeInterval = 86_400
        public var keysUnsaidAge: TimeInterval = 3_600
        /// The least time between two fetches of a key set that tokens of unknown `kid`s may cause.
        public var keysRefetchInterval: TimeInterval = 60
        /// How long the link token of `identity_link_required` lives.
        public var linkTTL: TimeInterval = 600
        /// Whether an account with a second factor is asked for it after a provider's token too.
        public var secondFactor = true

        public struct Apple: Sendable {
            public var clientIDs: [String] = []
            /// Where Apple answers (`/auth/keys`, `/auth/token`, `/auth/revoke`): Apple's own unless pointed at a stand-in.
            public var url = "https://appleid.apple.com"
            /// The team id, and the Sign in with Apple key (its id and its `.p8` file's PEM) that signs the client
            /// secret for Apple's token and revoke endpoints.
            public var teamID: String?
            public var keyID: String?
            public var privateKeyPEM: String?
            public init() {}
        }

        public struct Google: Sendable {
            public var clientIDs: [String] = []
            /// Google's published keys.
            public var keysURL = "https://www.googleapis.com/oauth2/v3/certs"
            public init() {}
        }

        public init() {}
    }

    public init() {}
}

/// A bad configuration value. Its description is the one line the server prints before it stops.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var variable: String
    public var problem: String
    public var description: String { "configuration error: \(variable): \(problem)" }

    package init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }
}

extension GatehouseConfiguration {
    /// Reads the configuration from environment variables; see the README's table.
    public static func fromEnvironment(_ env: [String: String]) throws -> GatehouseConfiguration {
        var c = GatehouseConfiguration()
        let reader = EnvironmentReader(env: env)
        c.host = try reader.string("GATEHOUSE_HOST", default: c.host, nonEmpty: true)
        c.port = try reader.int("GATEHOUSE_PORT", default: c.port, range: 0...65535)
        c.environment = try reader.choice("GATEHOUSE_ENV", default: c.environment)
        let databaseURL = try reader.string("DATABASE_URL", default: "gatehouse.sqlite", nonEmpty: true)
        c.database = try parseDatabaseURL(databaseURL)
        c.publicURL = try reader.string("PUBLIC_URL", default: "http://\(c.host):\(c.port)", nonEmpty: true)
        if c.publicURL.hasSuffix("/") { c.publicURL.removeLast() }
        guard let url = URL(string: c.publicURL), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw ConfigurationError(variable: "PUBLIC_URL", problem: "must be an http(s) URL such as https://id.example.com, got \"\(c.publicURL)\"")
        }
        c.databasePoolSize = try reader.int("GATEHOUSE_DB_POOL_SIZE", default: c.databasePoolSize, range: 1...100)
        c.databasePoolTimeout = try reader.seconds("GATEHOUSE_DB_POOL_TIMEOUT_SECONDS", default: c.databasePoolTimeout, range: 0.1...60)
        c.databaseQueryTimeout = try reader.seconds("GATEHOUSE_DB_QUERY_TIMEOUT_SECONDS", default: c.databaseQueryTimeout, range: 0.1...3_600)
        c.databasePlanCacheMode = try reader.choice("GATEHOUSE_DB_PLAN_CACHE_MODE", default: c.databasePlanCacheMode)
        if let direct = reader.raw("GATEHOUSE_DATABASE_DIRECT_URL"), !direct.isEmpty {
            guard case .postgres = c.database else {
                throw ConfigurationError(variable: "GATEHOUSE_DATABASE_DIRECT_URL", problem: "is for a PostgreSQL DATABASE_URL that goes through a pooler in transaction mode; DATABASE_URL is a SQLite file")
            }
            guard direct.hasPrefix("postgres://") || direct.hasPrefix("postgresql://"), case .postgres = try parseDatabaseURL(direct) else {
                throw ConfigurationError(variable: "GATEHOUSE_DATABASE_DIRECT_URL", problem: "must be PostgreSQL's own address (postgres://user:password@host:5432/database)")
            }
            // A pooler refuses start-up parameters it does not know, and one connection's setting
            // would not follow its transactions to the next server connection anyway.
            guard c.databasePlanCacheMode == .auto else {
                throw ConfigurationError(variable: "GATEHOUSE_DB_PLAN_CACHE_MODE", problem: "cannot be sent through a pooler in transaction mode (GATEHOUSE_DATABASE_DIRECT_URL is set): set it on the database role instead (ALTER ROLE … SET plan_cache_mode = …)")
            }
            c.databaseDirect = try parseDatabaseURL(direct)
        }
        if let replicas = reader.raw("GATEHOUSE_DATABASE_REPLICA_URLS"), !replicas.trimmingCharacters(in: .whitespaces).isEmpty {
            guard case .postgres = c.database else {
                throw ConfigurationError(variable: "GATEHOUSE_DATABASE_REPLICA_URLS", problem: "needs a PostgreSQL DATABASE_URL: replicas are PostgreSQL's streaming replicas")
            }
            c.databaseReplicas = try replicas.split(separator: ",").map { raw in
                let url = raw.trimmingCharacters(in: .whitespaces)
                guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"), case .postgres = try? parseDatabaseURL(url) else {
                    throw ConfigurationError(variable: "GATEHOUSE_DATABASE_REPLICA_URLS", problem: "must be PostgreSQL addresses separated by commas (postgres://user:password@replica:5432/database)")
                }
                return .postgres(url: url)
            }
        }
        c.replicaMaxLag = try reader.seconds("GATEHOUSE_REPLICA_MAX_LAG_SECONDS", default: c.replicaMaxLag, range: 0.1...60)
        c.replicaPin = try reader.seconds("GATEHOUSE_REPLICA_PIN_SECONDS", default: c.replicaPin, range: 0.1...600)
        guard c.replicaPin >= c.replicaMaxLag else {
            throw ConfigurationError(variable: "GATEHOUSE_REPLICA_PIN_SECONDS", problem: "must be at least GATEHOUSE_REPLICA_MAX_LAG_SECONDS (\(c.replicaMaxLag)): a person who just wrote must not read a replica that may not have it")
        }
        if let bus = reader.raw("GATEHOUSE_EVENT_BUS"), !bus.isEmpty, bus != "database" {
            guard RedisAddress(url: bus) != nil else {
                throw ConfigurationError(variable: "GATEHOUSE_EVENT_BUS",
                                         problem: "must be database (the default) or a Redis server's address, redis://[user:password@]host[:port][/db]")
            }
            c.eventBusURL = bus
        }
        c.eventBusSilence = try reader.seconds("GATEHOUSE_EVENT_BUS_SILENCE_SECONDS", default: c.eventBusSilence, range: 1...3600)
        c.runMigrationsOnStart = try reader.bool("GATEHOUSE_AUTO_MIGRATE", default: true)
        c.logLevel = try reader.choice("GATEHOUSE_LOG_LEVEL", default: c.logLevel)
        c.logFormat = try reader.choice("GATEHOUSE_LOG_FORMAT", default: c.logFormat)
        let secret = reader.verbatim("GATEHOUSE_SECRET")
        if let secret {
            guard secret.utf8.count >= 32 else {
                throw ConfigurationError(variable: "GATEHOUSE_SECRET", problem: "must be at least 32 characters")
            }
            c.secret = secret
        } else if c.environment == .production {
            throw ConfigurationError(variable: "GATEHOUSE_SECRET", problem: "is required in production (at least 32 random characters, the same on every instance)")
        }
        c.trustForwardedFor = try reader.bool("GATEHOUSE_TRUST_FORWARDED_FOR", default: false)
        c.storage.directory = reader.raw("GATEHOUSE_BLOB_DIR")
        if let bucket = reader.raw("GATEHOUSE_S3_BUCKET") {
            let endpoint = try reader.string("GATEHOUSE_S3_ENDPOINT", default: "https://s3.amazonaws.com", nonEmpty: true)
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError(variable: "GATEHOUSE_S3_ENDPOINT", problem: "must be an http(s) URL, e.g. https://s3.eu-west-1.amazonaws.com")
            }
            guard let access = reader.raw("GATEHOUSE_S3_ACCESS_KEY"), let secretKey = reader.raw("GATEHOUSE_S3_SECRET_KEY") else {
                throw ConfigurationError(variable: "GATEHOUSE_S3_ACCESS_KEY", problem: "and GATEHOUSE_S3_SECRET_KEY are required with GATEHOUSE_S3_BUCKET")
            }
            var s3 = Storage.S3(endpoint: endpoint, bucket: bucket, accessKey: access, secretKey: secretKey)
            s3.region = try reader.string("GATEHOUSE_S3_REGION", default: s3.region, nonEmpty: true)
            s3.prefix = try reader.string("GATEHOUSE_S3_PREFIX", default: s3.prefix)
            c.storage.s3 = s3
        }
        c.storage.collectorGrace = try reader.seconds("GATEHOUSE_BLOB_GRACE_SECONDS", default: c.storage.collectorGrace, range: 60...604_800)
        c.metricsToken = reader.raw("GATEHOUSE_METRICS_TOKEN")
        if let token = c.metricsToken, token.utf8.count < 16 {
            throw ConfigurationError(variable: "GATEHOUSE_METRICS_TOKEN", problem: "must be at least 16 characters")
        }
        // In production the metrics (route counts, sign-in failures) are for the operator's scraper
        // only: on with a token, off (404) without one, and never open: asking for them without a
        // token is refused.
        let production = c.environment == .production
        c.metricsEnabled = try reader.bool("GATEHOUSE_METRICS", default: !production || c.metricsToken != nil)
        if production, c.metricsEnabled, c.metricsToken == nil {
            throw ConfigurationError(variable: "GATEHOUSE_METRICS",
                                     problem: "production serves /metrics only behind GATEHOUSE_METRICS_TOKEN (16+ characters): set it, or GATEHOUSE_METRICS=false")
        }
        c.allowDevelopmentOnNetwork = try reader.bool("GATEHOUSE_ALLOW_DEV_ON_NETWORK", default: false)
        if c.environment == .development, !c.allowDevelopmentOnNetwork, !Self.isLoopback(c.host) {
            throw ConfigurationError(variable: "GATEHOUSE_HOST", problem: "development mode (GATEHOUSE_ENV=development, with /dev/outbox showing every code) listens on loopback only; use GATEHOUSE_ENV=production, or set GATEHOUSE_ALLOW_DEV_ON_NETWORK=true to expose it on \(c.host) on purpose")
        }
        if let raw = reader.raw("GATEHOUSE_SMS_COUNTRIES") {
            c.smsCountries = raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "+", with: "") }
            guard !c.smsCountries.isEmpty, c.smsCountries.allSatisfy({ (1...3).contains($0.count) && $0.allSatisfy(\.isASCIIDigit) }) else {
                throw ConfigurationError(variable: "GATEHOUSE_SMS_COUNTRIES", problem: "must be calling codes separated by commas, e.g. 7,375,998; got \"\(raw)\"")
            }
        }
        c.http.headerTimeout = try reader.seconds("GATEHOUSE_HTTP_HEADER_TIMEOUT_SECONDS", default: c.http.headerTimeout, range: 0.1...600)
        c.http.bodyTimeout = try reader.seconds("GATEHOUSE_HTTP_BODY_TIMEOUT_SECONDS", default: c.http.bodyTimeout, range: 0.1...3600)
        c.http.idleTimeout = try reader.seconds("GATEHOUSE_HTTP_IDLE_TIMEOUT_SECONDS", default: c.http.idleTimeout, range: 0.1...3600)
        c.http.maxConnectionsPerAddress = try reader.int("GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS", default: c.http.maxConnectionsPerAddress, range: 1...1_000_000)
        c.http.shutdownGrace = try reader.seconds("GATEHOUSE_SHUTDOWN_GRACE_SECONDS", default: c.http.shutdownGrace, range: 0...600)
        c.http.tasksOnEventLoops = try reader.bool("GATEHOUSE_TASKS_ON_EVENT_LOOPS", default: c.http.tasksOnEventLoops)
        c.defaultCountryCode = try reader.string("GATEHOUSE_DEFAULT_COUNTRY_CODE", default: c.defaultCountryCode, nonEmpty: true)
        guard c.defaultCountryCode.count <= 3, c.defaultCountryCode.allSatisfy(\.isASCIIDigit) else {
            throw ConfigurationError(variable: "GATEHOUSE_DEFAULT_COUNTRY_CODE", problem: "must be 1-3 digits, e.g. 7")
        }

        // Delivery
        c.delivery.emailChannel = try reader.choice("GATEHOUSE_EMAIL_CHANNEL", default: c.delivery.emailChannel)
        c.delivery.smsChannel = try reader.choice("GATEHOUSE_SMS_CHANNEL", default: c.delivery.smsChannel)
        c.delivery.emailFrom = try reader.string("GATEHOUSE_EMAIL_FROM", default: c.delivery.emailFrom, nonEmpty: true)
        guard EmailAddress.isValid(c.delivery.emailFrom) else {
            throw ConfigurationError(variable: "GATEHOUSE_EMAIL_FROM", problem: "must be an email address")
        }
        c.delivery.emailFromName = try reader.string("GATEHOUSE_EMAIL_FROM_NAME", default: c.delivery.emailFromName)
        c.delivery.retryBaseDelay = try reader.seconds("GATEHOUSE_DELIVERY_RETRY_BASE_SECONDS", default: c.delivery.retryBaseDelay, range: 0.01...3600)
        c.delivery.maxRetryDelay = try reader.seconds("GATEHOUSE_DELIVERY_RETRY_MAX_SECONDS", default: c.delivery.maxRetryDelay, range: 1...86_400)
        c.delivery.maxAttempts = try reader.int("GATEHOUSE_DELIVERY_MAX_ATTEMPTS", default: c.delivery.maxAttempts, range: 1...1000)
        let poll = try reader.seconds("GATEHOUSE_DELIVERY_POLL_SECONDS", default: 1, range: 0.05...60)
        c.delivery.pollInterval = .milliseconds(Int(poll * 1000))
        let wait = try reader.seconds("GATEHOUSE_DELIVERY_WAIT_SECONDS", default: 3, range: 0...30)
        c.delivery.firstAttemptWait = .milliseconds(Int(wait * 1000))
        c.delivery.claimFloor = try reader.seconds("GATEHOUSE_DELIVERY_CLAIM_FLOOR_SECONDS", default: c.delivery.claimFloor, range: 1...86_400)

        c.delivery.smtp.host = try reader.string("SMTP_HOST", default: c.delivery.smtp.host, nonEmpty: true)
        c.delivery.smtp.port = try reader.int("SMTP_PORT", default: c.delivery.smtp.port, range: 1...65535)
        c.delivery.smtp.security = try reader.string("SMTP_SECURITY", default: c.delivery.smtp.security)
        guard ["none", "starttls", "tls"].contains(c.delivery.smtp.security) else {
            throw ConfigurationError(variable: "SMTP_SECURITY", problem: "must be one of none, starttls, tls; got \"\(c.delivery.smtp.security)\"")
        }
        c.delivery.smtp.username = reader.verbatim("SMTP_USERNAME")
        c.delivery.smtp.password = reader.verbatim("SMTP_PASSWORD")
        if (c.delivery.smtp.username == nil) != (c.delivery.smtp.password == nil) {
            throw ConfigurationError(variable: c.delivery.smtp.username == nil ? "SMTP_USERNAME" : "SMTP_PASSWORD", problem: "SMTP_USERNAME and SMTP_PASSWORD must be set together")
        }
        c.delivery.smtp.caFile = reader.verbatim("SMTP_CA_FILE")
        if let ca = c.delivery.smtp.caFile, !FileManager.default.isReadableFile(atPath: ca) {
            throw ConfigurationError(variable: "SMTP_CA_FILE", problem: "cannot read \(ca)")
        }
        c.delivery.smtp.verifyCertificates = try reader.bool("SMTP_VERIFY_CERTIFICATES", default: true)
        c.delivery.smtp.timeoutSeconds = try reader.int("SMTP_TIMEOUT_SECONDS", default: c.delivery.smtp.timeoutSeconds, range: 1...600)

        // Production delivers for real: with a development channel a code is kept in the outbox and reaches nobody,
        // so nobody can sign up or restore a password, while every request answers as if it were sent.
        c.allowDevelopmentDelivery = try reader.bool("GATEHOUSE_ALLOW_DEV_DELIVERY", default: false)
        if c.environment == .production, !c.allowDevelopmentDelivery {
            if c.delivery.emailChannel == .dev {
                throw ConfigurationError(variable: "GATEHOUSE_EMAIL_CHANNEL", problem: "production sends mail for real: set GATEHOUSE_EMAIL_CHANNEL=smtp "
                                         + "and SMTP_HOST (codes kept in the outbox reach nobody); GATEHOUSE_ALLOW_DEV_DELIVERY=true keeps them there on purpose")
            }
            if c.delivery.smsChannel == .dev {
                throw ConfigurationError(variable: "GATEHOUSE_SMS_CHANNEL", problem: "production sends SMS codes for real: set GATEHOUSE_SMS_CHANNEL=sms-http "
                                         + "and SMS_HTTP_URL (codes kept in the outbox reach nobody); GATEHOUSE_ALLOW_DEV_DELIVERY=true keeps them there on purpose")
            }
        }
        c.delivery.smsHTTP.url = try reader.string("SMS_HTTP_URL", default: "")
        if c.delivery.smsChannel == .smsHTTP {
            guard let url = URL(string: c.delivery.smsHTTP.url), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigurationError(variable: "SMS_HTTP_URL", problem: "must be an http(s) URL when GATEHOUSE_SMS_CHANNEL=sms-http")
            }
        }
        c.delivery.smsHTTP.method = try reader.string("SMS_HTTP_METHOD", default: c.delivery.smsHTTP.method).uppercased()
        guard ["POST", "PUT", "GET"].contains(c.delivery.smsHTTP.method) else {
            throw ConfigurationError(variable: "SMS_HTTP_METHOD", problem: "must be POST, PUT or GET")
        }
        if let raw = reader.verbatim("SMS_HTTP_HEADERS") {
            c.delivery.smsHTTP.headers = try raw.split(whereSeparator: \.isNewline).map { line in
                guard let colon = line.firstIndex(of: ":") else {
                    throw ConfigurationError(variable: "SMS_HTTP_HEADERS", problem: "each line must be \"Name: value\"")
                }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces)
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                guard !name.isEmpty else { throw ConfigurationError(variable: "SMS_HTTP_HEADERS", problem: "empty header name") }
                return (name, value)
            }
        }
        c.delivery.smsHTTP.contentType = try reader.string("SMS_HTTP_CONTENT_TYPE", default: c.delivery.smsHTTP.contentType, nonEmpty: true)
        c.delivery.smsHTTP.bodyTemplate = try reader.string("SMS_HTTP_BODY", default: c.delivery.smsHTTP.bodyTemplate)
        c.delivery.smsHTTP.timeoutSeconds = try reader.int("SMS_HTTP_TIMEOUT_SECONDS", default: c.delivery.smsHTTP.timeoutSeconds, range: 1...120)
        var hooks = c.delivery.webhooks
        hooks.timeout = try reader.seconds("GATEHOUSE_WEBHOOK_TIMEOUT_SECONDS", default: hooks.timeout, range: 1...60)
        if let text = reader.raw("GATEHOUSE_WEBHOOK_RETRY_SCHEDULE") {
            let delays = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard (1...30).contains(delays.count), delays.allSatisfy({ $0.map { $0 >= 0.01 && $0 <= 604_800 } ?? false }) else {
                throw ConfigurationError(variable: "GATEHOUSE_WEBHOOK_RETRY_SCHEDULE", problem: "must be 1 to 30 comma-separated waits in seconds (0.01...604800), got \"\(text)\"")
            }
            hooks.retrySchedule = delays.compactMap { $0 }
        }
        hooks.allowPrivateAddresses = try reader.bool("GATEHOUSE_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default: hooks.allowPrivateAddresses)
        hooks.allowHTTP = try reader.bool("GATEHOUSE_WEBHOOK_ALLOW_HTTP", default: c.environment == .development)
        if hooks.allowHTTP && c.environment == .production {
            throw ConfigurationError(variable: "GATEHOUSE_WEBHOOK_ALLOW_HTTP", problem: "webhooks carry signed account events: https only in production")
        }
        hooks.secretOverlap = try reader.seconds("GATEHOUSE_WEBHOOK_SECRET_OVERLAP_SECONDS", default: hooks.secretOverlap, range: 0...2_592_000)
        hooks.maxResponseBytes = try reader.int("GATEHOUSE_WEBHOOK_MAX_RESPONSE_BYTES", default: hooks.maxResponseBytes, range: 1_024...16_777_216)
        hooks.maxEndpoints = try reader.int("GATEHOUSE_WEBHOOK_MAX_ENDPOINTS", default: hooks.maxEndpoints, range: 1...10_000)
        c.delivery.webhooks = hooks

        // Gateway
        c.gateway.maxFrameBytes = try reader.int("GATEHOUSE_WS_MAX_FRAME_BYTES", default: c.gateway.maxFrameBytes, range: 512...1_048_576)
        c.gateway.pingInterval = .milliseconds(Int(try reader.seconds("GATEHOUSE_WS_PING_SECONDS", default: 30, range: 1...3600) * 1000))
        c.gateway.idleTimeout = .milliseconds(Int(try reader.seconds("GATEHOUSE_WS_IDLE_TIMEOUT_SECONDS", default: 300, range: 1...86_400) * 1000))
        c.gateway.closeTimeout = .milliseconds(Int(try reader.seconds("GATEHOUSE_WS_CLOSE_TIMEOUT_SECONDS", default: 5, range: 0.1...60) * 1000))
        c.gateway.maxConnections = try reader.int("GATEHOUSE_WS_MAX_CONNECTIONS", default: c.gateway.maxConnections, range: 1...10_000_000)
        c.gateway.maxInFlightPerConnection = try reader.int("GATEHOUSE_WS_MAX_IN_FLIGHT", default: c.gateway.maxInFlightPerConnection, range: 1...10_000)
        c.gateway.failuresPerConnection = try reader.int("GATEHOUSE_WS_FAILURES_PER_CONNECTION", default: c.gateway.failuresPerConnection, range: 1...10_000)

        // Messenger
        var m = c.messenger
        m.maxTextLength = try reader.int("GATEHOUSE_MESSENGER_MAX_TEXT_LENGTH", default: m.maxTextLength, range: 1...65_536)
        m.editWindow = try reader.seconds("GATEHOUSE_MESSENGER_EDIT_WINDOW_SECONDS", default: m.editWindow, range: 0...31_536_000)
        m.messagesPerMinute = try reader.int("GATEHOUSE_MESSENGER_MESSAGES_PER_MINUTE", default: m.messagesPerMinute, range: 1...1_000_000)
        m.editsPerMinute = try reader.int("GATEHOUSE_MESSENGER_EDITS_PER_MINUTE", default: m.editsPerMinute, range: 1...1_000_000)
        m.editsPerDay = try reader.int("GATEHOUSE_MESSENGER_EDITS_PER_DAY", default: m.editsPerDay, range: 1...100_000_000)
        m.friendRequestsPerDay = try reader.int("GATEHOUSE_MESSENGER_FRIEND_REQUESTS_PER_DAY", default: m.friendRequestsPerDay, range: 1...1_000_000)
        m.blocksPerAccount = try reader.int("GATEHOUSE_MESSENGER_BLOCKS_PER_ACCOUNT", default: m.blocksPerAccount, range: 1...1_000_000)
        m.friendRequestsPerPersonPerDay = try reader.int("GATEHOUSE_MESSENGER_FRIEND_REQUESTS_PER_PERSON_PER_DAY", default: m.friendRequestsPerPersonPerDay,
                                                         range: 1...1_000_000)
        m.attachmentMaxBytes = try reader.int("GATEHOUSE_MESSENGER_ATTACHMENT_MAX_BYTES", default: m.attachmentMaxBytes, range: 1_024...1_073_741_824)
        m.downloadChunkBytes = try reader.int("GATEHOUSE_MESSENGER_DOWNLOAD_CHUNK_BYTES", default: m.downloadChunkBytes, range: 1_024...16_777_216)
        m.attachmentsPerMessage = try reader.int("GATEHOUSE_MESSENGER_ATTACHMENTS_PER_MESSAGE", default: m.attachmentsPerMessage, range: 0...100)
        m.uploadsPerHour = try reader.int("GATEHOUSE_MESSENGER_UPLOADS_PER_HOUR", default: m.uploadsPerHour, range: 1...1_000_000)
        m.forwardMaxChats = try reader.int("GATEHOUSE_MESSENGER_FORWARD_MAX_CHATS", default: m.forwardMaxChats, range: 1...1_000)
        m.pageSize = try reader.int("GATEHOUSE_MESSENGER_PAGE_SIZE", default: m.pageSize, range: 1...1_000)
        m.maxPageSize = try reader.int("GATEHOUSE_MESSENGER_MAX_PAGE_SIZE", default: max(m.maxPageSize, m.pageSize), range: m.pageSize...10_000)
        m.eventRetention = try reader.seconds("GATEHOUSE_MESSENGER_EVENT_RETENTION_SECONDS", default: m.eventRetention, range: 60...31_536_000)
        m.sendContexts = try reader.int("GATEHOUSE_MESSENGER_SEND_CONTEXTS", default: m.sendContexts, range: 0...10_000_000)
        m.paymentChats = try reader.int("GATEHOUSE_MESSENGER_PAYMENT_CHATS", default: m.paymentChats, range: 0...10_000_000)
        m.sendLinger = .microseconds(Int(try reader.double("GATEHOUSE_MESSENGER_SEND_LINGER_MS", default: m.sendLinger / .milliseconds(1), range: 0...100) * 1000))
        m.realtimeMaxFrameBytes = try reader.int("GATEHOUSE_REALTIME_MAX_FRAME_BYTES", default: m.realtimeMaxFrameBytes, range: 512...1_048_576)
        m.realtimeMaxConnections = try reader.int("GATEHOUSE_REALTIME_MAX_CONNECTIONS", default: m.realtimeMaxConnections, range: 1...10_000_000)
        m.realtimePingInterval = .milliseconds(Int(try reader.seconds("GATEHOUSE_REALTIME_PING_SECONDS", default: 30, range: 1...3600) * 1000))
        m.realtimeIdleTimeout = .milliseconds(Int(try reader.seconds("GATEHOUSE_REALTIME_IDLE_TIMEOUT_SECONDS", default: 86_400, range: 1...604_800) * 1000))
        m.realtimeAuthTimeout = .milliseconds(Int(try reader.seconds("GATEHOUSE_REALTIME_AUTH_TIMEOUT_SECONDS", default: 10, range: 0.1...600) * 1000))
        c.messenger = m

        // Wallet
        var w = c.wallet
        w.maxTransfer = Int64(try reader.int("GATEHOUSE_WALLET_MAX_TRANSFER_KOPECKS", default: Int(w.maxTransfer), range: 1...1_000_000_000_000))
        w.dailyLimit = Int64(try reader.int("GATEHOUSE_WALLET_DAILY_LIMIT_KOPECKS", default: Int(max(w.dailyLimit, w.maxTransfer)),
                                            range: Int(w.maxTransfer)...1_000_000_000_000))
        w.requestTTL = try reader.seconds("GATEHOUSE_WALLET_REQUEST_TTL_SECONDS", default: w.requestTTL, range: 60...31_536_000)
        w.idempotencyKeyTTL = try reader.seconds("GATEHOUSE_WALLET_IDEMPOTENCY_TTL_SECONDS", default: w.idempotencyKeyTTL, range: 3_600...2_592_000)
        w.maxComment = try reader.int("GATEHOUSE_WALLET_MAX_COMMENT_LENGTH", default: w.maxComment, range: 1...4_096)
        w.lookupsPerHour = try reader.int("GATEHOUSE_WALLET_LOOKUPS_PER_HOUR", default: w.lookupsPerHour, range: 1...1_000_000)
        w.requestsPerDay = try reader.int("GATEHOUSE_WALLET_REQUESTS_PER_DAY", default: w.requestsPerDay, range: 1...1_000_000)
        w.transfersPerCommit = try reader.int("GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT", default: w.transfersPerCommit, range: 1...1_000)
        w.commitWriters = try reader.int("GATEHOUSE_WALLET_COMMIT_WRITERS", default: w.commitWriters, range: 1...64)
        w.commitBacklog = try reader.int("GATEHOUSE_WALLET_COMMIT_BACKLOG", default: w.commitBacklog, range: 1...10_000)
        w.transfersInOneStatement = try reader.bool("GATEHOUSE_WALLET_ONE_STATEMENT", default: w.transfersInOneStatement)
        var t = w.topUps
        t.stripeSecretKey = reader.verbatim("GATEHOUSE_STRIPE_SECRET_KEY")
        t.webhookSecret = reader.verbatim("GATEHOUSE_STRIPE_WEBHOOK_SECRET")
        // Stripe when its key is set, the local stand-in in development, else none.
        let defaultProvider: Wallet.TopUps.Provider = t.stripeSecretKey != nil ? .stripe : (c.environment == .development ? .local : .off)
        t.provider = try reader.choice("GATEHOUSE_TOPUP_PROVIDER", default: defaultProvider)
        if t.provider == .stripe {
            guard t.stripeSecretKey != nil else {
                throw ConfigurationError(variable: "GATEHOUSE_STRIPE_SECRET_KEY", problem: "GATEHOUSE_TOPUP_PROVIDER=stripe needs Stripe's secret key")
            }
            guard t.webhookSecret != nil else {
                throw ConfigurationError(variable: "GATEHOUSE_STRIPE_WEBHOOK_SECRET", problem: "Stripe's payments are credited by its signed webhooks: set the endpoint's signing secret (whsec_…)")
            }
        }
        if t.provider == .local && c.environment == .production {
            throw ConfigurationError(variable: "GATEHOUSE_TOPUP_PROVIDER", problem: "the local provider confirms payments nobody made: development only")
        }
        t.stripeAPIURL = reader.raw("GATEHOUSE_STRIPE_API_URL") ?? t.stripeAPIURL
        t.notificationTolerance = try reader.seconds("GATEHOUSE_TOPUP_NOTIFICATION_TOLERANCE_SECONDS", default: t.notificationTolerance, range: 10...3_600)
        t.returnURL = reader.raw("GATEHOUSE_TOPUP_RETURN_URL")
        t.minAmount = Int64(try reader.int("GATEHOUSE_TOPUP_MIN_KOPECKS", default: Int(t.minAmount), range: 1...1_000_000_000_000))
        t.maxAmount = Int64(try reader.int("GATEHOUSE_TOPUP_MAX_KOPECKS", default: Int(max(t.maxAmount, t.minAmount)), range: Int(t.minAmount)...1_000_000_000_000))
        t.perDay = try reader.int("GATEHOUSE_TOPUPS_PER_DAY", default: t.perDay, range: 1...1_000_000)
        t.timeoutSeconds = try reader.int("GATEHOUSE_TOPUP_TIMEOUT_SECONDS", default: t.timeoutSeconds, range: 1...120)
        w.topUps = t
        c.wallet = w

        // Sign To Login
        var sig = c.signature
        sig.appsPerAccount = try reader.int("GATEHOUSE_APPS_PER_ACCOUNT", default: sig.appsPerAccount, range: 1...10_000)
        sig.appIconMaxBytes = try reader.int("GATEHOUSE_APP_ICON_MAX_BYTES", default: sig.appIconMaxBytes, range: 1_024...67_108_864)
        sig.enrolmentSignatures = try reader.int("GATEHOUSE_SIGNATURE_ENROLMENT_SIGNATURES", default: sig.enrolmentSignatures, range: 3...50)
        sig.enrolmentKeep = try reader.seconds("GATEHOUSE_SIGNATURE_ENROLMENT_KEEP_SECONDS", default: sig.enrolmentKeep, range: 60...604_800)
        sig.attemptsPerAccount = try reader.int("GATEHOUSE_SIGNATURE_ATTEMPTS_PER_ACCOUNT", default: sig.attemptsPerAccount, range: 1...1_000_000)
        sig.attemptsPerIP = try reader.int("GATEHOUSE_SIGNATURE_ATTEMPTS_PER_IP", default: sig.attemptsPerIP, range: 1...1_000_000)
        sig.attemptsPerSession = try reader.int("GATEHOUSE_SIGNATURE_ATTEMPTS_PER_SESSION", default: sig.attemptsPerSession, range: 1...1_000_000)
        sig.lookupsPerIP = try reader.int("GATEHOUSE_SIGNATURE_LOOKUPS_PER_IP", default: sig.lookupsPerIP, range: 1...10_000_000)
        sig.lookupsPerApp = try reader.int("GATEHOUSE_SIGNATURE_LOOKUPS_PER_APP", default: sig.lookupsPerApp, range: 1...100_000_000)
        sig.acceptAt = try reader.double("GATEHOUSE_SIGNATURE_ACCEPT_AT", default: sig.acceptAt, range: 0...1)
        sig.replayDistance = try reader.double("GATEHOUSE_SIGNATURE_REPLAY_DISTANCE", default: sig.replayDistance, range: 0...1)
        sig.replayHistory = try reader.int("GATEHOUSE_SIGNATURE_REPLAY_HISTORY", default: sig.replayHistory, range: 0...10_000)
        sig.modelCache = try reader.int("GATEHOUSE_SIGNATURE_MODEL_CACHE", default: sig.modelCache, range: 0...10_000_000)
        sig.appCacheTTL = try reader.seconds("GATEHOUSE_APP_CACHE_SECONDS", default: sig.appCacheTTL, range: 0...1)
        sig.attemptWindow = try reader.seconds("GATEHOUSE_SIGNATURE_ATTEMPT_WINDOW_SECONDS", default: sig.attemptWindow, range: 1...86_400)
        sig.maxBodyBytes = try reader.int("GATEHOUSE_SIGNATURE_MAX_BODY_BYTES", default: sig.maxBodyBytes, range: 65_536...268_435_456)
        sig.photoMaxBytes = try reader.int("GATEHOUSE_SIGNATURE_PHOTO_MAX_BYTES", default: sig.photoMaxBytes, range: 1_024...67_108_864)
        sig.appStoreURL = reader.raw("GATEHOUSE_SIGNATURE_APP_STORE_URL").flatMap { $0.isEmpty ? nil : $0 } ?? sig.appStoreURL
        sig.warnBelow = try reader.double("GATEHOUSE_SIGNATURE_WARN_BELOW", default: sig.warnBelow, range: 0...1)
        sig.signFloor = try reader.double("GATEHOUSE_SIGNATURE_SIGN_FLOOR", default: min(sig.signFloor, sig.acceptAt), range: 0...1)
        guard sig.signFloor <= sig.acceptAt else {
            throw ConfigurationError(variable: "GATEHOUSE_SIGNATURE_SIGN_FLOOR",
                                     problem: "must not be above GATEHOUSE_SIGNATURE_ACCEPT_AT (\(sig.acceptAt)): an attempt that signs a person in must be able to sign")
        }
        sig.maxPointsPerSignature = try reader.int("GATEHOUSE_SIGNATURE_MAX_POINTS", default: sig.maxPointsPerSignature, range: 16...1_000_000)
        c.signature = sig

        // The audit trail
        c.audit.retention = Double(try reader.int("GATEHOUSE_AUDIT_RETENTION_DAYS", default: Int(c.audit.retention / 86_400), range: 1...36_500)) * 86_400
        c.audit.failureWindow = try reader.seconds("GATEHOUSE_AUDIT_FAILURE_WINDOW_SECONDS", default: c.audit.failureWindow, range: 60...86_400)

        // Push notifications
        var push = c.delivery.push
        if let keyFile = reader.raw("GATEHOUSE_APNS_KEY_FILE") {
            guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
                throw ConfigurationError(variable: "GATEHOUSE_APNS_KEY_FILE", problem: "cannot read \(keyFile)")
            }
            guard let keyID = reader.raw("GATEHOUSE_APNS_KEY_ID"), let teamID = reader.raw("GATEHOUSE_APNS_TEAM_ID") else {
                throw ConfigurationError(variable: "GATEHOUSE_APNS_KEY_ID", problem: "GATEHOUSE_APNS_KEY_FILE needs GATEHOUSE_APNS_KEY_ID and GATEHOUSE_APNS_TEAM_ID")
            }
            var apns = Push.APNs(privateKeyPEM: pem, keyID: keyID, teamID: teamID)
            apns.productionEndpoint = reader.raw("GATEHOUSE_APNS_ENDPOINT") ?? apns.productionEndpoint
            apns.sandboxEndpoint = reader.raw("GATEHOUSE_APNS_SANDBOX_ENDPOINT") ?? apns.sandboxEndpoint
            push.apns = apns
        }
        if let accountFile = reader.raw("GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE") {
            guard let json = try? String(contentsOfFile: accountFile, encoding: .utf8) else {
                throw ConfigurationError(variable: "GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE", problem: "cannot read \(accountFile)")
            }
            var fcm = Push.FCM(serviceAccountJSON: json)
            fcm.endpoint = reader.raw("GATEHOUSE_FCM_ENDPOINT") ?? fcm.endpoint
            push.fcm = fcm
        }
        push.caFile = reader.raw("GATEHOUSE_PUSH_CA_FILE")
        push.timeoutSeconds = try reader.int("GATEHOUSE_PUSH_TIMEOUT_SECONDS", default: push.timeoutSeconds, range: 1...120)
        push.devicesPerAccount = try reader.int("GATEHOUSE_PUSH_DEVICES_PER_ACCOUNT", default: push.devicesPerAccount, range: 1...1_000)
        push.coalesceWindow = try reader.seconds("GATEHOUSE_PUSH_COALESCE_SECONDS", default: push.coalesceWindow, range: 0...60)
        push.queueBatch = try reader.int("GATEHOUSE_PUSH_QUEUE_BATCH", default: push.queueBatch, range: 1...10_000)
        push.queueMaxAttempts = try reader.int("GATEHOUSE_PUSH_QUEUE_MAX_ATTEMPTS", default: push.queueMaxAttempts, range: 1...1_000)
        push.queueMaxAge = try reader.seconds("GATEHOUSE_PUSH_QUEUE_MAX_AGE_SECONDS", default: push.queueMaxAge, range: 60...2_419_200)
        c.delivery.push = push

        // The operator console and the admin API
        var ops = c.operators
        ops.sessionIdle = Double(try reader.int("GATEHOUSE_OPERATOR_SESSION_IDLE_MINUTES", default: Int(ops.sessionIdle / 60), range: 1...1_440)) * 60
        ops.sessionMax = Double(try reader.int("GATEHOUSE_OPERATOR_SESSION_HOURS", default: Int(ops.sessionMax / 3_600), range: 1...168)) * 3_600
        ops.signInFailuresPerName = try reader.int("GATEHOUSE_OPERATOR_SIGNIN_FAILURES_PER_NAME", default: ops.signInFailuresPerName, range: 1...1_000)
        ops.signInFailuresPerIP = try reader.int("GATEHOUSE_OPERATOR_SIGNIN_FAILURES_PER_IP", default: ops.signInFailuresPerIP, range: 1...100_000)
        ops.importMaxBytes = try reader.int("GATEHOUSE_CLIENT_IMPORT_MAX_BYTES", default: ops.importMaxBytes, range: 1_024...1_073_741_824)
        ops.accountImportMaxBytes = try reader.int("GATEHOUSE_ACCOUNT_IMPORT_MAX_BYTES", default: ops.accountImportMaxBytes, range: 1_024...4_294_967_296)
        ops.importMaxRows = try reader.int("GATEHOUSE_CLIENT_IMPORT_MAX_ROWS", default: ops.importMaxRows, range: 1...10_000_000)
        c.operators = ops

        // Signed tokens
        var tokens = c.tokens
        tokens.accessTokenTTL = try reader.seconds("GATEHOUSE_ACCESS_TOKEN_TTL_SECONDS", default: tokens.accessTokenTTL, range: 60...3_600)
        tokens.signingKeyLifetime = Double(try reader.int("GATEHOUSE_SIGNING_KEY_ROTATE_DAYS", default: Int(tokens.signingKeyLifetime / 86_400),
                                                          range: 1...3_650)) * 86_400
        tokens.audience = reader.raw("GATEHOUSE_ACCESS_TOKEN_AUDIENCE").flatMap { $0.isEmpty ? nil : $0 }
        tokens.refreshTokenTTL = try reader.seconds("GATEHOUSE_REFRESH_TOKEN_TTL_SECONDS", default: tokens.refreshTokenTTL, range: 300...31_536_000)
        tokens.refreshReuseInterval = try reader.seconds("GATEHOUSE_REFRESH_REUSE_INTERVAL_SECONDS", default: tokens.refreshReuseInterval, range: 0...120)
        tokens.authorizationCodeTTL = try reader.seconds("GATEHOUSE_OIDC_CODE_TTL_SECONDS", default: tokens.authorizationCodeTTL, range: 10...600)
        c.tokens = tokens

        // Limits
        var l = c.limits
        l.codeLength = try reader.int("GATEHOUSE_CODE_LENGTH", default: l.codeLength, range: 4...10)
        l.codeTTL = try reader.seconds("GATEHOUSE_CODE_TTL_SECONDS", default: l.codeTTL, range: 30...86_400)
        l.codeMaxAttempts = try reader.int("GATEHOUSE_CODE_MAX_ATTEMPTS", default: l.codeMaxAttempts, range: 1...100)
        l.resendCooldown = try reader.seconds("GATEHOUSE_CODE_RESEND_SECONDS", default: l.resendCooldown, range: 0...3600)
        l.smsPerPhonePerDay = try reader.int("GATEHOUSE_SMS_PER_PHONE_PER_DAY", default: l.smsPerPhonePerDay, range: 1...1000)
        l.emailsPerAddressPerDay = try reader.int("GATEHOUSE_EMAILS_PER_ADDRESS_PER_DAY", default: l.emailsPerAddressPerDay, range: 1...1000)
        l.codeRequestsPerIP = try reader.int("GATEHOUSE_CODE_REQUESTS_PER_IP", default: l.codeRequestsPerIP, range: 1...100_000)
        l.codeRequestsPerIPWindow = try reader.seconds("GATEHOUSE_CODE_REQUESTS_PER_IP_WINDOW_SECONDS", default: l.codeRequestsPerIPWindow, range: 1...86_400)
        l.loginFailuresPerAccount = try reader.int("GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT", default: l.loginFailuresPerAccount, range: 1...10_000)
        l.loginFailuresPerIP = try reader.int("GATEHOUSE_LOGIN_FAILURES_PER_IP", default: l.loginFailuresPerIP, range: 1...1_000_000)
        l.loginFailureWindow = try reader.seconds("GATEHOUSE_LOGIN_FAILURE_WINDOW_SECONDS", default: l.loginFailureWindow, range: 1...86_400)
        l.sessionTTL = try reader.seconds("GATEHOUSE_SESSION_TTL_SECONDS", default: l.sessionTTL, range: 60...86_400)
        l.sessionCacheTTL = try reader.seconds("GATEHOUSE_SESSION_CACHE_SECONDS", default: l.sessionCacheTTL, range: 0...1)
        l.sessionCacheMaxAge = try reader.seconds("GATEHOUSE_SESSION_CACHE_MAX_SECONDS", default: l.sessionCacheMaxAge, range: 0...300)
        l.confirmationLinkTTL = try reader.seconds("GATEHOUSE_CONFIRM_LINK_TTL_SECONDS", default: l.confirmationLinkTTL, range: 60...2_592_000)
        l.temporaryPasswordTTL = try reader.seconds("GATEHOUSE_TEMP_PASSWORD_TTL_SECONDS", default: l.temporaryPasswordTTL, range: 60...604_800)
        l.accountDeletionGrace = try reader.seconds("GATEHOUSE_ACCOUNT_DELETION_GRACE_SECONDS", default: l.accountDeletionGrace, range: 0...31_536_000)
        l.maxBodyBytes = try reader.int("GATEHOUSE_MAX_BODY_BYTES", default: l.maxBodyBytes, range: 1024...104_857_600)
        l.maxFieldLength = try reader.int("GATEHOUSE_MAX_FIELD_LENGTH", default: l.maxFieldLength, range: 16...65_536)
        l.avatarMaxBytes = try reader.int("GATEHOUSE_AVATAR_MAX_BYTES", default: l.avatarMaxBytes, range: 1024...52_428_800)
        l.codeRequestsPerAddressPerDestination = try reader.int("GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION", default: l.codeRequestsPerAddressPerDestination, range: 1...1_000_000)
        l.recentLoginWindow = try reader.seconds("GATEHOUSE_RECENT_LOGIN_SECONDS", default: l.recentLoginWindow, range: 0...86_400)
        c.limits = l

        var p = c.passwords
        p.minLength = try reader.int("GATEHOUSE_PASSWORD_MIN_LENGTH", default: p.minLength, range: 4...72)
        p.requireDigit = try reader.bool("GATEHOUSE_PASSWORD_REQUIRE_DIGIT", default: p.requireDigit)
        p.requireSpecial = try reader.bool("GATEHOUSE_PASSWORD_REQUIRE_SPECIAL", default: p.requireSpecial)
        p.refuseCommon = try reader.bool("GATEHOUSE_PASSWORD_REFUSE_COMMON", default: p.refuseCommon)
        if let url = reader.raw("GATEHOUSE_PASSWORD_BREACH_API"), !url.isEmpty {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw ConfigurationError(variable: "GATEHOUSE_PASSWORD_BREACH_API", problem: "expected an http(s) URL, got \(url)")
            }
            p.breachRangeURL = url.hasSuffix("/") ? String(url.dropLast()) : url
        }
        p.breachMinimumCount = try reader.int("GATEHOUSE_PASSWORD_BREACH_MIN_COUNT", default: p.breachMinimumCount, range: 1...1_000_000)
        p.breachTimeoutSeconds = try reader.int("GATEHOUSE_PASSWORD_BREACH_TIMEOUT_SECONDS", default: p.breachTimeoutSeconds, range: 1...30)
        p.bcryptCost = try reader.int("GATEHOUSE_BCRYPT_COST", default: p.bcryptCost, range: 4...16)
        c.passwords = p

        var f = c.secondFactors
        f.challengeTTL = try reader.seconds("GATEHOUSE_SECOND_FACTOR_CHALLENGE_SECONDS", default: f.challengeTTL, range: 30...3_600)
        f.attemptsPerChallenge = try reader.int("GATEHOUSE_SECOND_FACTOR_ATTEMPTS", default: f.attemptsPerChallenge, range: 1...100)
        f.failuresPerAccount = try reader.int("GATEHOUSE_SECOND_FACTOR_FAILURES_PER_ACCOUNT", default: f.failuresPerAccount, range: 1...10_000)
        f.enrolmentTTL = try reader.seconds("GATEHOUSE_TOTP_ENROLMENT_SECONDS", default: f.enrolmentTTL, range: 60...86_400)
        f.recoveryUndoesWithin = Double(try reader.int("GATEHOUSE_RECOVERY_UNDOES_FACTORS_DAYS", default: Int(f.recoveryUndoesWithin / 86_400),
                                                       range: 0...365)) * 86_400
        if let issuer = reader.raw("GATEHOUSE_TOTP_ISSUER") {
            let trimmed = issuer.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.count <= 64, !trimmed.contains(":") else {
                throw ConfigurationError(variable: "GATEHOUSE_TOTP_ISSUER", problem: "expected 1 to 64 characters without ':', got \(issuer)")
            }
            f.issuer = trimmed
        }
        c.secondFactors = f

        var k = c.passkeys
        if let id = reader.raw("GATEHOUSE_WEBAUTHN_RP_ID"), !id.isEmpty {
            guard id == id.lowercased(), !id.contains("/"), !id.contains(":"), !id.contains(" ") else {
                throw ConfigurationError(variable: "GATEHOUSE_WEBAUTHN_RP_ID", problem: "expected a domain such as example.com, got \(id)")
            }
            k.rpID = id
        }
        if let name = reader.raw("GATEHOUSE_WEBAUTHN_RP_NAME"), !name.trimmingCharacters(in: .whitespaces).isEmpty {
            k.rpName = String(name.trimmingCharacters(in: .whitespaces).prefix(64))
        }
        if let origins = reader.raw("GATEHOUSE_WEBAUTHN_ORIGINS"), !origins.isEmpty {
            k.origins = origins.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for origin in k.origins where !(origin.hasPrefix("https://") || origin.hasPrefix("http://") || origin.hasPrefix("ios:") || origin.hasPrefix("android:")) {
                throw ConfigurationError(variable: "GATEHOUSE_WEBAUTHN_ORIGINS", problem: "expected http(s)://, ios: or android: origins, got \(origin)")
            }
        }
        k.challengeTTL = try reader.seconds("GATEHOUSE_WEBAUTHN_CHALLENGE_SECONDS", default: k.challengeTTL, range: 30...3_600)
        k.perAccount = try reader.int("GATEHOUSE_PASSKEYS_PER_ACCOUNT", default: k.perAccount, range: 1...100)
        k.optionsPerIP = try reader.int("GATEHOUSE_PASSKEY_OPTIONS_PER_IP", default: k.optionsPerIP, range: 1...1_000_000)
        c.passkeys = k
        c.identityProviders = try Self.identityProviders(reader)
        return c
    }

    private static func identityProviders(_ reader: EnvironmentReader) throws -> IdentityProviders {
        var p = IdentityProviders()
        func ids(_ name: String) throws -> [String] {
            let list = (reader.raw(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            for id in list where id.utf8.count > 255 || id.contains(where: { $0.isWhitespace }) {
                throw ConfigurationError(variable: name, problem: "expected client ids separated by commas, got \(id)")
            }
            return list
        }
        func url(_ name: String, default value: String) throws -> String {
            guard let raw = reader.raw(name) else { return value }
            guard let parsed = URL(string: raw), parsed.host != nil, parsed.scheme == "https" || parsed.scheme == "http" else {
                throw ConfigurationError(variable: name, problem: "expected an http(s) URL, got \(raw)")
            }
            return raw.hasSuffix("/") ? String(raw.dropLast()) : raw
        }
        p.apple.clientIDs = try ids("GATEHOUSE_APPLE_CLIENT_IDS")
        p.apple.url = try url("GATEHOUSE_APPLE_URL", default: p.apple.url)
        p.apple.teamID = reader.raw("GATEHOUSE_APPLE_TEAM_ID")
        p.apple.keyID = reader.raw("GATEHOUSE_APPLE_KEY_ID")
        if let path = reader.raw("GATEHOUSE_APPLE_KEY_FILE") {
            guard let pem = try? String(contentsOfFile: path, encoding: .utf8), pem.contains("-----BEGIN PRIVATE KEY-----") else {
                throw ConfigurationError(variable: "GATEHOUSE_APPLE_KEY_FILE", problem: "expected the .p8 file Apple gave for the key (a PEM private key), at \(path)")
            }
            p.apple.privateKeyPEM = pem
        }
        let signing = [p.apple.teamID != nil, p.apple.keyID != nil, p.apple.privateKeyPEM != nil]
        if signing.contains(true) && signing.contains(false) {
            throw ConfigurationError(variable: "GATEHOUSE_APPLE_TEAM_ID", problem: "GATEHOUSE_APPLE_TEAM_ID, GATEHOUSE_APPLE_KEY_ID and GATEHOUSE_APPLE_KEY_FILE go together")
        }
        p.google.clientIDs = try ids("GATEHOUSE_GOOGLE_CLIENT_IDS")
        p.google.keysURL = try url("GATEHOUSE_GOOGLE_KEYS_URL", default: p.google.keysURL)
        p.skew = try reader.seconds("GATEHOUSE_IDENTITY_TOKEN_SKEW_SECONDS", default: p.skew, range: 0...600)
        p.keysLeastAge = try reader.seconds("GATEHOUSE_IDENTITY_KEYS_MIN_AGE_SECONDS", default: p.keysLeastAge, range: 1...86_400)
        p.keysMostAge = try reader.seconds("GATEHOUSE_IDENTITY_KEYS_MAX_AGE_SECONDS", default: p.keysMostAge, range: p.keysLeastAge...604_800)
        p.keysUnsaidAge = min(max(p.keysUnsaidAge, p.keysLeastAge), p.keysMostAge)
        p.keysRefetchInterval = try reader.seconds("GATEHOUSE_IDENTITY_KEYS_REFETCH_SECONDS", default: p.keysRefetchInterval, range: 1...86_400)
        p.linkTTL = try reader.seconds("GATEHOUSE_IDENTITY_LINK_SECONDS", default: p.linkTTL, range: 60...3_600)
        p.secondFactor = try reader.bool("GATEHOUSE_IDENTITY_SECOND_FACTOR", default: p.secondFactor)
        return p
    }

    /// Where what needs a session of its own connects (`databaseDirect`): the database itself.
    package var sessionDatabase: DatabaseLocation { databaseDirect ?? database }

    /// The passkeys' relying party id: configured, or `PUBLIC_URL`'s host.
    package var passkeyRPID: String { passkeys.rpID ?? URL(string: publicURL)?.host ?? "localhost" }

    /// The passkeys' origins: configured, or `PUBLIC_URL`'s origin.
    package var passkeyOrigins: Set<String> {
        if !passkeys.origins.isEmpty { return Set(passkeys.origins) }
        guard let url = URL(string: publicURL), let scheme = url.scheme, let host = url.host else { return [] }
        return [scheme + "://" + host + (url.port.map { ":\($0)" } ?? "")]
    }

    /// Whether `host` only listens on this machine.
    package static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        return h == "localhost" || h == "::1" || h == "[::1]" || h.hasPrefix("127.")
    }

    package static func parseDatabaseURL(_ raw: String) throws -> DatabaseLocation {
        if raw.hasPrefix("postgres://") || raw.hasPrefix("postgresql://") {
            // TCP (a host), or libpq's form for a Unix socket (`host=/directory`: PostgresAddress).
            let socket = PostgresAddress.socketDirectory(raw) != nil
            guard let url = URL(string: raw), socket ? (try? PostgresAddress.configuration(raw)) != nil : !(url.host ?? "").isEmpty else {
                throw ConfigurationError(variable: "DATABASE_URL", problem: "is not a valid postgres URL (postgres://user:password@host:5432/database, or through a Unix socket postgres://user@/database?host=/var/run/postgresql)")
            }
            return .postgres(url: raw)
        }
        if raw.hasPrefix("sqlite://") {
            let path = String(raw.dropFirst("sqlite://".count))
            guard !path.isEmpty else { throw ConfigurationError(variable: "DATABASE_URL", problem: "sqlite:// needs a file path") }
            return .sqlite(path: path)
        }
        if raw.contains("://") {
            throw ConfigurationError(variable: "DATABASE_URL", problem: "unsupported scheme; use postgres://… or a SQLite file path")
        }
        return .sqlite(path: raw)
    }
}

/// Reads typed values from an environment dictionary, turning a bad value into a
/// `ConfigurationError` that names the variable.
package struct EnvironmentReader {
    package let env: [String: String]

    /// A value exactly as set (a secret, a password, a path, lines of headers: spaces are theirs),
    /// or nil when unset or empty.
    package func verbatim(_ name: String) -> String? {
        guard let value = env[name], !value.isEmpty else { return nil }
        return value
    }

    /// A value without the spaces around it, or nil when unset or blank.
    package func raw(_ name: String) -> String? {
        guard let value = env[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    package func string(_ name: String, default value: String, nonEmpty: Bool = false) throws -> String {
        guard let raw = env[name] else { return value }
        if nonEmpty && raw.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ConfigurationError(variable: name, problem: "must not be empty")
        }
        return raw
    }

    package func int(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = raw(name) else { return value }
        guard let number = Int(raw), range.contains(number) else {
            throw ConfigurationError(variable: name, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound), got \"\(raw)\"")
        }
        return number
    }

    package func seconds(_ name: String, default value: TimeInterval, range: ClosedRange<Double>) throws -> TimeInterval {
        guard let raw = raw(name) else { return value }
        guard let number = Double(raw), number.isFinite, range.contains(number) else {
            throw ConfigurationError(variable: name, problem: "must be a number of seconds in \(range.lowerBound)...\(range.upperBound), got \"\(raw)\"")
        }
        return number
    }

    package func double(_ name: String, default value: Double, range: ClosedRange<Double>) throws -> Double {
        guard let raw = raw(name) else { return value }
        guard let number = Double(raw), number.isFinite, range.contains(number) else {
            throw ConfigurationError(variable: name, problem: "must be a number in \(range.lowerBound)...\(range.upperBound), got \"\(raw)\"")
        }
        return number
    }

    package func bool(_ name: String, default value: Bool) throws -> Bool {
        guard let raw = raw(name)?.lowercased() else { return value }
        switch raw {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError(variable: name, problem: "must be true or false, got \"\(raw)\"")
        }
    }

    package func choice<T: RawRepresentable>(_ name: String, default value: T) throws -> T where T.RawValue == String, T: CaseIterable {
        guard let raw = raw(name) else { return value }
        guard let parsed = T(rawValue: raw.lowercased()) ?? T(rawValue: raw) else {
            let options = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError(variable: name, problem: "must be one of \(options), got \"\(raw)\"")
        }
        return parsed
    }
}

extension GatehouseConfiguration.Environment: CaseIterable {}
extension GatehouseConfiguration.Delivery.EmailChannel: CaseIterable {}
extension GatehouseConfiguration.Delivery.SMSChannel: CaseIterable {}

extension Character {
    package var isASCIIDigit: Bool { isASCII && isNumber }
}
