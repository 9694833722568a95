import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

@Suite("Operations: metrics, health, dev outbox, request ids")
struct OperationsTests {
    @Test("/metrics reports request counts, latency and the outbox depth", arguments: TestEngine.once)
    func metrics_exposePrometheusText(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            #expect(try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")]).status == .ok)
            #expect(try await app.get("/no-such-page").status == .notFound)
            await app.services.deliverer.deliverDue()
            let response = try await app.get("/metrics")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = response.text
            #expect(text.contains("hb_requests"))
            #expect(text.contains(#"http_route="/api/users/sms""#))
            // A request no route took counts under Hummingbird's name for it, in the requests and the errors alike.
            let notFound = text.split(separator: "\n").filter { $0.contains(#"http_route="NotFound""#) && !$0.hasPrefix("#") }
            #expect(notFound.contains { $0.hasPrefix("hb_requests") } && notFound.contains { $0.hasPrefix("hb_request_errors") }, "\(notFound)")
            #expect(text.contains("http_server_request_duration"))
            #expect(text.contains("gatehouse_outbox_depth"))
            #expect(text.contains("gatehouse_outbox_delivered_total"))
        }
    }

    @Test("a server whose migrations fail stops with the error instead of hanging")
    func migrationFailure_stopsTheServer() async throws {
        // setup: a SQLite file in a folder that does not exist, so the database never opens (nor its lease's lock file)
        var configuration = GatehouseConfiguration.testing(database: .sqlite(path: "/nonexistent-\(UUID().uuidString)/x.sqlite"))
        configuration.delivery.pollInterval = .milliseconds(50)
        let app = try await buildApplication(configuration: configuration)

        // MUT: run it, with a watchdog
        let outcome = try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                do {
                    try await app.runService()
                    return "returned"
                } catch {
                    return "threw"
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(20))
                return "hung"
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }

        // validate
        #expect(outcome == "threw")
    }

    @Test("/health answers when the database does", arguments: TestEngine.once)
    func health_isOK(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let response = try await app.get("/health")
            #expect(response.status == .ok)
            #expect(response.text == "ok")
            let live = try await app.get("/health/live")
            #expect(live.status == .ok && live.text == "ok")
            #expect(live.headers[.contentType] == "text/plain; charset=utf-8")
        }
    }

    @Test("the dev outbox lists messages newest first with every field", arguments: TestEngine.once)
    func devOutbox_listsNewestFirst(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "x@example.com")
            let raw = try await app.get("\(DevAPI.Path.outbox)?to=%2B79123456789").text
            #expect(raw.hasPrefix(#"[{"body":"#))
            for key in ["channel", "to", "subject", "body", "code", "createdAt"] {
                #expect(raw.contains("\"\(key)\":"), "\(key) missing in \(raw)")
            }
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(PhoneAccountsAPI.Path.sendConfirm, [], token: token)
            app.clock.advance(by: 5)
            try await app.postForm(PhoneAccountsAPI.Path.restore, [("phone", "+79123456789"), ("sms", "1")])
            let sms = try await app.outbox(to: "+79123456789")
            #expect(sms.count == 2)
            #expect(sms[0].createdAt > sms[1].createdAt)
            #expect(sms[1].body.contains("code is") || sms[1].body.contains("код"))
            let all = try await app.get(DevAPI.Path.outbox)
            #expect(try JSONDecoder().decode([DevOutboxMessage].self, from: Data(buffer: all.body)).count == 3)
        }
    }

    @Test("in production the dev outbox route does not exist", arguments: TestEngine.once)
    func devOutbox_inProduction_is404(engine: TestEngine) async throws {
        try await withApp(engine, configure: { (c: inout GatehouseConfiguration) in c.environment = GatehouseConfiguration.Environment.production }) { app in
            let outbox = try await app.get(DevAPI.Path.outbox)
            #expect(outbox.status == .notFound)
            let sms = try await app.postForm(PhoneAccountsAPI.Path.sendSMS, [("phone", "+79123456789")])
            #expect(sms.status == .ok)
        }
    }

    @Test("every answer carries a request id; a sane client id (≤ 64 ASCII letters, digits, - or _) is echoed, any other replaced; a plain 404 is not for caches either", arguments: TestEngine.once)
    func requestID_isEchoed(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let own = try await app.get("/health", headers: [HTTPField.Name("X-Request-Id")!: "abc-123"])
            #expect(own.headers[HTTPField.Name("X-Request-Id")!] == "abc-123")
            let generated = try await app.get("/health", headers: [HTTPField.Name("X-Request-Id")!: "<script>"])
            let id = try #require(generated.headers[HTTPField.Name("X-Request-Id")!])
            #expect(id != "<script>" && !id.isEmpty)
            for (sent, echoed) in [(String(repeating: "a", count: 64), true), (String(repeating: "a", count: 65), false),
                                   ("Идентификатор", false), ("id_with-both_9", true)] {
                let answer = try await app.get("/health", headers: [HTTPField.Name("X-Request-Id")!: sent])
                #expect((answer.headers[HTTPField.Name("X-Request-Id")!] == sent) == echoed, "\(sent)")
            }
            let missing = try await app.get("/api/users/nope")
            #expect(missing.status == .notFound)
            #expect(missing.headers[HTTPField.Name("X-Request-Id")!] != nil)
            #expect(missing.headers[.cacheControl] == "no-store")
        }
    }
}

@Suite("Configuration from the environment")
struct ConfigurationTests {
    @Test("defaults: 127.0.0.1:8080, development, SQLite file in the working directory, dev delivery")
    func defaults() throws {
        let c = try GatehouseConfiguration.fromEnvironment([:])
        #expect(c.host == "127.0.0.1" && c.port == 8080)
        #expect(c.environment == .development)
        #expect(c.database == .sqlite(path: "gatehouse.sqlite"))
        #expect(c.publicURL == "http://127.0.0.1:8080")
        #expect(c.delivery.smsChannel == .dev && c.delivery.emailChannel == .dev)
        #expect(c.limits.codeLength == 6 && c.limits.codeTTL == 600 && c.limits.codeMaxAttempts == 5)
        #expect(c.limits.resendCooldown == 60 && c.limits.smsPerPhonePerDay == 5)
        #expect(c.limits.codeRequestsPerIP == 30 && c.limits.codeRequestsPerIPWindow == 300)
        #expect(c.limits.sessionTTL == 86_400 && c.passwords.bcryptCost == 10)
        // the security review's limits (docs/security.md)
        #expect(c.http.headerTimeout == 10 && c.http.bodyTimeout == 30 && c.http.idleTimeout == 60)
        #expect(c.http.maxConnectionsPerAddress == 256 && c.http.shutdownGrace == 10)
        #expect(c.limits.codeRequestsPerAddressPerDestination == 3 && c.limits.recentLoginWindow == 600)
        #expect(c.effectiveSMSCountries == ["7"] && c.metricsToken == nil && !c.allowDevelopmentOnNetwork)
    }

    @Test("the names operators rely on are read")
    func operatorVariables() throws {
        let c = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_HOST": "0.0.0.0", "GATEHOUSE_PORT": "9090", "GATEHOUSE_ENV": "production",
            "DATABASE_URL": "postgres://u:p@db:5432/gatehouse", "PUBLIC_URL": "https://id.example.com/",
            "GATEHOUSE_SECRET": String(repeating: "s", count: 40),
            "GATEHOUSE_SMS_CHANNEL": "sms-http", "SMS_HTTP_URL": "https://sms.example.com/send", "GATEHOUSE_EMAIL_CHANNEL": "smtp",
            "SMS_HTTP_HEADERS": "Authorization: Key k\nX-A: b", "GATEHOUSE_CODE_TTL_SECONDS": "300",
            "GATEHOUSE_AVATAR_MAX_BYTES": "65536", "GATEHOUSE_SESSION_CACHE_SECONDS": "0.25",
            "GATEHOUSE_DB_POOL_TIMEOUT_SECONDS": "5",
            "GATEHOUSE_HTTP_HEADER_TIMEOUT_SECONDS": "5", "GATEHOUSE_HTTP_BODY_TIMEOUT_SECONDS": "20",
            "GATEHOUSE_HTTP_IDLE_TIMEOUT_SECONDS": "30", "GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "1000",
            "GATEHOUSE_SHUTDOWN_GRACE_SECONDS": "15", "GATEHOUSE_SMS_COUNTRIES": "+7, 375,998",
            "GATEHOUSE_METRICS_TOKEN": "metrics-token-0123456789", "GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION": "2",
            "GATEHOUSE_RECENT_LOGIN_SECONDS": "120", "GATEHOUSE_TASKS_ON_EVENT_LOOPS": "false",
        ])
        #expect(c.host == "0.0.0.0" && c.port == 9090 && c.environment == .production)
        #expect(try !c.http.tasksOnEventLoops && GatehouseConfiguration.fromEnvironment([:]).http.tasksOnEventLoops)
        #expect(c.database == .postgres(url: "postgres://u:p@db:5432/gatehouse"))
        #expect(c.publicURL == "https://id.example.com")
        #expect(c.delivery.smsChannel == .smsHTTP && c.delivery.emailChannel == .smtp)
        #expect(c.delivery.smsHTTP.headers.map(\.0) == ["Authorization", "X-A"])
        #expect(c.limits.codeTTL == 300)
        #expect(c.limits.avatarMaxBytes == 65536)
        #expect(c.limits.sessionCacheTTL == 0.25 && c.databasePoolTimeout == 5)
        #expect(c.http.headerTimeout == 5 && c.http.bodyTimeout == 20 && c.http.idleTimeout == 30)
        #expect(c.http.maxConnectionsPerAddress == 1000 && c.http.shutdownGrace == 15)
        #expect(c.effectiveSMSCountries == ["7", "375", "998"] && c.metricsToken == "metrics-token-0123456789")
        #expect(c.limits.codeRequestsPerAddressPerDestination == 2 && c.limits.recentLoginWindow == 120)
    }

    @Test("storage, WebSocket and database-deadline and plan variables are read, and a half-given S3 setting is refused by name")
    func storageAndRealtimeVariables() throws {
        // setup, MUT
        let c = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_BLOB_DIR": "/var/lib/gatehouse/blobs", "GATEHOUSE_BLOB_GRACE_SECONDS": "120",
            "GATEHOUSE_S3_BUCKET": "avatars", "GATEHOUSE_S3_ENDPOINT": "http://minio:9000", "GATEHOUSE_S3_REGION": "eu-west-1",
            "GATEHOUSE_S3_ACCESS_KEY": "AKIA0123", "GATEHOUSE_S3_SECRET_KEY": "secret", "GATEHOUSE_S3_PREFIX": "prod/",
            "GATEHOUSE_WS_CLOSE_TIMEOUT_SECONDS": "2.5", "GATEHOUSE_DB_QUERY_TIMEOUT_SECONDS": "7",
            "GATEHOUSE_DB_PLAN_CACHE_MODE": "force_generic_plan",
        ])
        let defaults = try GatehouseConfiguration.fromEnvironment([:])
        // validate
        #expect(c.storage.directory == "/var/lib/gatehouse/blobs" && c.storage.collectorGrace == 120)
        let s3 = try #require(c.storage.s3)
        #expect(s3.bucket == "avatars" && s3.endpoint == "http://minio:9000" && s3.region == "eu-west-1")
        #expect(s3.accessKey == "AKIA0123" && s3.secretKey == "secret" && s3.prefix == "prod/")
        #expect(c.gateway.closeTimeout == .milliseconds(2500) && c.databaseQueryTimeout == 7)
        #expect(defaults.storage.s3 == nil && defaults.gateway.closeTimeout == .seconds(5) && defaults.databaseQueryTimeout == 15)
        #expect(c.databasePlanCacheMode == .forceGenericPlan && defaults.databasePlanCacheMode == .auto)
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_DB_PLAN_CACHE_MODE": "generic"]) }
        #expect(throws: ConfigurationError(variable: "GATEHOUSE_S3_ACCESS_KEY", problem: "and GATEHOUSE_S3_SECRET_KEY are required with GATEHOUSE_S3_BUCKET")) {
            try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_S3_BUCKET": "b", "GATEHOUSE_S3_ACCESS_KEY": "k"])
        }
        #expect(throws: ConfigurationError.self) {
            try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_S3_BUCKET": "b", "GATEHOUSE_S3_ENDPOINT": "minio:9000",
                                                       "GATEHOUSE_S3_ACCESS_KEY": "k", "GATEHOUSE_S3_SECRET_KEY": "s"])
        }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_WS_CLOSE_TIMEOUT_SECONDS": "0"]) }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_BLOB_GRACE_SECONDS": "1"]) }
    }

    @Test("development mode on a network address, when allowed, says so loudly in the banner")
    func developmentOnNetwork_banner() throws {
        let allowed = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_HOST": "0.0.0.0", "GATEHOUSE_ALLOW_DEV_ON_NETWORK": "true"])
        let loopback = try GatehouseConfiguration.fromEnvironment([:])
        #expect(ServerCommands.banner(configuration: allowed, port: 8080).contains { $0.hasPrefix("WARNING: development mode on a network address") })
        #expect(!ServerCommands.banner(configuration: loopback, port: 8080).contains { $0.hasPrefix("WARNING") })
    }

    @Test("push: without keys the banner says it is off (kept in the outbox in development); an APNs key file without its ids is refused by name")
    func push_banner() throws {
        var production = try GatehouseConfiguration.fromEnvironment([:])
        production.environment = .production
        let development = try GatehouseConfiguration.fromEnvironment([:])
        #expect(ServerCommands.banner(configuration: production, port: 8080).contains { $0.hasPrefix("push: off") })
        #expect(ServerCommands.banner(configuration: development, port: 8080).contains { $0.hasPrefix("push: kept in the outbox") })
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).p8").path
        try "not a key".write(toFile: keyFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keyFile) }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_APNS_KEY_FILE": keyFile]) }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE": "/nonexistent/fcm.json"]) }
        #expect(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_PUSH_COALESCE_SECONDS": "61"]) }
    }

    @Test("the push queue's and the outbox's claim limits: safe defaults, read, and a value out of range refused by name; a claim lasts the floor or twice the longest attempt, whichever is longer")
    func pushQueueAndClaimLimits() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:]).delivery
        #expect(defaults.push.queueBatch == 200 && defaults.push.queueMaxAttempts == 5 && defaults.push.queueMaxAge == 86_400)
        #expect(defaults.claimFloor == 120 && OutboxDeliverer.claimDuration(defaults) == 120, "the floor above twice SMTP's 30 s")
        let set = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_PUSH_QUEUE_BATCH": "50", "GATEHOUSE_PUSH_QUEUE_MAX_ATTEMPTS": "3", "GATEHOUSE_PUSH_QUEUE_MAX_AGE_SECONDS": "3600",
            "GATEHOUSE_DELIVERY_CLAIM_FLOOR_SECONDS": "30",
        ]).delivery
        #expect(set.push.queueBatch == 50 && set.push.queueMaxAttempts == 3 && set.push.queueMaxAge == 3_600 && set.claimFloor == 30)
        #expect(OutboxDeliverer.claimDuration(set) == 60, "a floor below twice the longest attempt (SMTP's 30 s) gives way to it")
        let long = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_DELIVERY_CLAIM_FLOOR_SECONDS": "900"]).delivery
        #expect(OutboxDeliverer.claimDuration(long) == 900)
        for (variable, value) in [("GATEHOUSE_PUSH_QUEUE_BATCH", "0"), ("GATEHOUSE_PUSH_QUEUE_MAX_ATTEMPTS", "0"),
                                  ("GATEHOUSE_PUSH_QUEUE_MAX_AGE_SECONDS", "5"), ("GATEHOUSE_DELIVERY_CLAIM_FLOOR_SECONDS", "0")] {
            #expect { try GatehouseConfiguration.fromEnvironment([variable: value]) } throws: { ($0 as? ConfigurationError)?.variable == variable }
        }
    }

    @Test("the messenger's remembered send contexts and payment chats: 50,000 each by default, read, 0 keeps none, and a value out of range refused by name")
    func sendContextsSetting() throws {
        let settings: [(String, @Sendable (GatehouseConfiguration) -> Int)] = [
            ("GATEHOUSE_MESSENGER_SEND_CONTEXTS", { $0.messenger.sendContexts }), ("GATEHOUSE_MESSENGER_PAYMENT_CHATS", { $0.messenger.paymentChats }),
        ]
        for (variable, read) in settings {
            #expect(read(try GatehouseConfiguration.fromEnvironment([:])) == 50_000, "\(variable)")
            #expect(read(try GatehouseConfiguration.fromEnvironment([variable: "0"])) == 0, "\(variable)")
            #expect(read(try GatehouseConfiguration.fromEnvironment([variable: "1000"])) == 1_000, "\(variable)")
            for value in ["-1", "10000001", "many"] {
                #expect { try GatehouseConfiguration.fromEnvironment([variable: value]) } throws: { ($0 as? ConfigurationError)?.variable == variable }
            }
        }
    }

    @Test("the send writer's linger: 10 ms by default, read in milliseconds (fractions too), 0 never waits, a value out of range refused by name")
    func sendLingerSetting() throws {
        #expect(try GatehouseConfiguration.fromEnvironment([:]).messenger.sendLinger == .milliseconds(10))
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_MESSENGER_SEND_LINGER_MS": "0"]).messenger.sendLinger == .zero)
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_MESSENGER_SEND_LINGER_MS": "2.5"]).messenger.sendLinger == .microseconds(2_500))
        for value in ["-1", "101", "soon", "nan"] {
            #expect { try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_MESSENGER_SEND_LINGER_MS": value]) } throws: {
                ($0 as? ConfigurationError)?.variable == "GATEHOUSE_MESSENGER_SEND_LINGER_MS"
            }
        }
    }

    @Test("the operator console's and imports' limits: safe defaults, read, and a value out of range refused by name")
    func operatorLimits() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:]).operators
        #expect(defaults.sessionIdle == 1_800 && defaults.sessionMax == 28_800 && defaults.signInFailuresPerName == 5)
        #expect(defaults.importMaxRows == 100_000 && defaults.importMaxBytes == 32 * 1_048_576)
        let set = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_OPERATOR_SESSION_IDLE_MINUTES": "5", "GATEHOUSE_OPERATOR_SESSION_HOURS": "2",
                                                              "GATEHOUSE_CLIENT_IMPORT_MAX_ROWS": "10", "GATEHOUSE_PUSH_DEVICES_PER_ACCOUNT": "3"])
        #expect(set.operators.sessionIdle == 300 && set.operators.sessionMax == 7_200 && set.operators.importMaxRows == 10)
        #expect(set.delivery.push.devicesPerAccount == 3)
        for (name, value) in [("GATEHOUSE_OPERATOR_SESSION_IDLE_MINUTES", "0"), ("GATEHOUSE_OPERATOR_SESSION_HOURS", "169"),
                              ("GATEHOUSE_OPERATOR_SIGNIN_FAILURES_PER_NAME", "0"), ("GATEHOUSE_CLIENT_IMPORT_MAX_ROWS", "0"),
                              ("GATEHOUSE_PUSH_DEVICES_PER_ACCOUNT", "0")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
    }

    @Test("webhooks' settings: safe defaults (https only outside development, no private addresses, about a day of retries), read, and a bad value refused by name")
    func webhookVariables() throws {
        let development = try GatehouseConfiguration.fromEnvironment([:]).delivery.webhooks
        #expect(development.allowHTTP && !development.allowPrivateAddresses && development.timeout == 10 && development.secretOverlap == 86_400)
        #expect(development.retrySchedule.reduce(0, +) > 86_400, "retried for more than a day")
        let productionEnv = ["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40),
                             "GATEHOUSE_EMAIL_CHANNEL": "smtp", "SMTP_HOST": "smtp.example.com",
                             "GATEHOUSE_SMS_CHANNEL": "sms-http", "SMS_HTTP_URL": "https://sms.example.com/send"]
        let production = try GatehouseConfiguration.fromEnvironment(productionEnv)
        #expect(!production.delivery.webhooks.allowHTTP)
        let set = try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_WEBHOOK_RETRY_SCHEDULE": "1, 2,3", "GATEHOUSE_WEBHOOK_TIMEOUT_SECONDS": "4",
                                                              "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "true", "GATEHOUSE_WEBHOOK_MAX_ENDPOINTS": "2"]).delivery.webhooks
        #expect(set.retrySchedule == [1, 2, 3] && set.timeout == 4 && set.allowPrivateAddresses && set.maxEndpoints == 2)
        for (name, value) in [("GATEHOUSE_WEBHOOK_RETRY_SCHEDULE", "5,soon"), ("GATEHOUSE_WEBHOOK_RETRY_SCHEDULE", "-1"), ("GATEHOUSE_WEBHOOK_TIMEOUT_SECONDS", "0"),
                              ("GATEHOUSE_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "perhaps"), ("GATEHOUSE_WEBHOOK_MAX_RESPONSE_BYTES", "1")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(value)") { try GatehouseConfiguration.fromEnvironment([name: value]) }
        }
        let refused = try #require(throws: ConfigurationError.self) {
            try GatehouseConfiguration.fromEnvironment(productionEnv.merging(["GATEHOUSE_WEBHOOK_ALLOW_HTTP": "true"]) { $1 })
        }
        #expect(refused.variable == "GATEHOUSE_WEBHOOK_ALLOW_HTTP", "\(refused)")
    }

    @Test("the wallet's limits are read, have safe defaults, and a value out of range is refused by name")
    func walletVariables() throws {
        let defaults = try GatehouseConfiguration.fromEnvironment([:]).wallet
        #expect(defaults.maxTransfer == 15_000_000 && defaults.dailyLimit == 60_000_000 && defaults.transfersPerCommit == 64
                && defaults.commitWriters == 2 && defaults.transfersInOneStatement)
        let w = try GatehouseConfiguration.fromEnvironment([
            "GATEHOUSE_WALLET_MAX_TRANSFER_KOPECKS": "500000", "GATEHOUSE_WALLET_DAILY_LIMIT_KOPECKS": "900000",
            "GATEHOUSE_WALLET_REQUEST_TTL_SECONDS": "3600", "GATEHOUSE_WALLET_IDEMPOTENCY_TTL_SECONDS": "7200",
            "GATEHOUSE_WALLET_MAX_COMMENT_LENGTH": "80", "GATEHOUSE_WALLET_LOOKUPS_PER_HOUR": "7",
            "GATEHOUSE_WALLET_REQUESTS_PER_DAY": "9", "GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT": "1", "GATEHOUSE_WALLET_COMMIT_WRITERS": "3",
            "GATEHOUSE_WALLET_ONE_STATEMENT": "false",
        ]).wallet
        #expect(w.maxTransfer == 500_000 && w.dailyLimit == 900_000 && w.requestTTL == 3_600 && w.idempotencyKeyTTL == 7_200)
        #expect(w.maxComment == 80 && w.lookupsPerHour == 7 && w.requestsPerDay == 9 && w.transfersPerCommit == 1 && w.commitWriters == 3
                && !w.transfersInOneStatement)
        for (variable, value) in [("GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT", "0"), ("GATEHOUSE_WALLET_ONE_STATEMENT", "sometimes"), ("GATEHOUSE_WALLET_TRANSFERS_PER_COMMIT", "1001"),
                                  ("GATEHOUSE_WALLET_COMMIT_WRITERS", "0"), ("GATEHOUSE_WALLET_COMMIT_WRITERS", "65"),
                                  ("GATEHOUSE_WALLET_MAX_TRANSFER_KOPECKS", "0"), ("GATEHOUSE_WALLET_IDEMPOTENCY_TTL_SECONDS", "60")] {
            #expect(throws: ConfigurationError.self, "\(variable)=\(value)") { try GatehouseConfiguration.fromEnvironment([variable: value]) }
        }
    }

    @Test("safe defaults for the session and app caches and the pool wait")
    func cacheAndPoolDefaults() throws {
        let c = try GatehouseConfiguration.fromEnvironment([:])
        #expect(c.limits.sessionCacheTTL == 0.5)
        #expect(c.databasePoolTimeout == 3)
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_SESSION_CACHE_SECONDS": "0"]).limits.sessionCacheTTL == 0)
        #expect(c.signature.appCacheTTL == 0.5)
        #expect(try GatehouseConfiguration.fromEnvironment(["GATEHOUSE_APP_CACHE_SECONDS": "0"]).signature.appCacheTTL == 0)
    }

    @Test("a bad value stops the server with one line naming the variable", arguments: [
        (["GATEHOUSE_PORT": "eighty"], "GATEHOUSE_PORT"),
        (["GATEHOUSE_PORT": "70000"], "GATEHOUSE_PORT"),
        (["GATEHOUSE_ENV": "staging"], "GATEHOUSE_ENV"),
        (["DATABASE_URL": "mysql://x"], "DATABASE_URL"),
        (["PUBLIC_URL": "not a url"], "PUBLIC_URL"),
        (["GATEHOUSE_ENV": "production"], "GATEHOUSE_SECRET"),
        // Production delivers for real: a development channel is refused by name (GATEHOUSE_ALLOW_DEV_DELIVERY opts out).
        (["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40)], "GATEHOUSE_EMAIL_CHANNEL"),
        (["GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": String(repeating: "s", count: 40), "GATEHOUSE_EMAIL_CHANNEL": "smtp"],
         "GATEHOUSE_SMS_CHANNEL"),
        (["GATEHOUSE_SMS_CHANNEL": "sms-http"], "SMS_HTTP_URL"),
        (["SMTP_SECURITY": "ssl3"], "SMTP_SECURITY"),
        (["SMTP_USERNAME": "me"], "SMTP_PASSWORD"),
        (["GATEHOUSE_BCRYPT_COST": "40"], "GATEHOUSE_BCRYPT_COST"),
        (["GATEHOUSE_AVATAR_MAX_BYTES": "12"], "GATEHOUSE_AVATAR_MAX_BYTES"),
        (["GATEHOUSE_CODE_MAX_ATTEMPTS": "0"], "GATEHOUSE_CODE_MAX_ATTEMPTS"),
        // Longer than 1 s would break the promise that a revocation reaches every instance within a second.
        (["GATEHOUSE_SESSION_CACHE_SECONDS": "2"], "GATEHOUSE_SESSION_CACHE_SECONDS"),
        // The same promise for an app's key disabled or rotated on another instance.
        (["GATEHOUSE_APP_CACHE_SECONDS": "2"], "GATEHOUSE_APP_CACHE_SECONDS"),
        (["GATEHOUSE_DB_POOL_TIMEOUT_SECONDS": "0"], "GATEHOUSE_DB_POOL_TIMEOUT_SECONDS"),
        (["GATEHOUSE_TRUST_FORWARDED_FOR": "maybe"], "GATEHOUSE_TRUST_FORWARDED_FOR"),
        (["GATEHOUSE_HOST": "0.0.0.0"], "GATEHOUSE_HOST"),   // development mode off loopback
        (["GATEHOUSE_METRICS_TOKEN": "short"], "GATEHOUSE_METRICS_TOKEN"),
        (["GATEHOUSE_SMS_COUNTRIES": "7,russia"], "GATEHOUSE_SMS_COUNTRIES"),
        (["GATEHOUSE_HTTP_HEADER_TIMEOUT_SECONDS": "0"], "GATEHOUSE_HTTP_HEADER_TIMEOUT_SECONDS"),
        (["GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "0"], "GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS"),
        (["GATEHOUSE_SHUTDOWN_GRACE_SECONDS": "-1"], "GATEHOUSE_SHUTDOWN_GRACE_SECONDS"),
        (["GATEHOUSE_TASKS_ON_EVENT_LOOPS": "sometimes"], "GATEHOUSE_TASKS_ON_EVENT_LOOPS"),
        (["GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION": "0"], "GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION"),
    ])
    func badValue_namesTheVariable(env: [String: String], variable: String) throws {
        let error = try #require(throws: ConfigurationError.self) { try GatehouseConfiguration.fromEnvironment(env) }
        #expect(error.variable == variable)
        #expect(error.description.hasPrefix("configuration error: \(variable): "))
        #expect(!error.description.contains("\n"))
    }
}

@Suite("Phone, email and language rules")
struct DomainRuleTests {
    @Test("phone normalisation", arguments: [
        ("+7 912 345-67-89", "+79123456789"), ("89123456789", "+79123456789"), ("79123456789", "+79123456789"),
        ("9123456789", "+79123456789"), ("8 (912) 345-67-89", "+79123456789"), ("+49 30 1234567", "+49301234567"),
        ("0049 30 1234567", "+49301234567"),
    ])
    func phone_normalises(typed: String, expected: String) {
        #expect(PhoneNumber.normalize(typed, defaultCountryCode: "7") == expected)
    }

    @Test("bad phones", arguments: ["", "12345", "+7 912 345", "+7912345678901", "phone", "+0123456789", "12-34-56+7", "8912345678a"])
    func phone_rejects(typed: String) {
        #expect(PhoneNumber.normalize(typed, defaultCountryCode: "7") == nil)
    }

    @Test("another default country: national numbers with a trunk 0")
    func phone_otherCountry() {
        #expect(PhoneNumber.normalize("030 1234567", defaultCountryCode: "49") == "+49301234567")
    }

    @Test("emails", arguments: [("Ivan@Example.COM", "ivan@example.com"), (" a.b+c@mail.example.org ", "a.b+c@mail.example.org")])
    func email_normalises(typed: String, expected: String) {
        #expect(EmailAddress.normalize(typed) == expected)
    }

    @Test("bad emails", arguments: ["", "a", "a@b", "a@@b.com", "a b@c.com", ".a@b.com", "a@-b.com", "a@b.c", "a@b.123"])
    func email_rejects(typed: String) {
        #expect(EmailAddress.normalize(typed) == nil)
    }

    @Test("Accept-Language negotiation honours q-values and falls back")
    func language() {
        #expect(AppLanguage.negotiate(nil, fallback: .ru) == .ru)
        #expect(AppLanguage.negotiate("en-US,en;q=0.9", fallback: .ru) == .en)
        #expect(AppLanguage.negotiate("de-DE,ru;q=0.5,en;q=0.8", fallback: .ru) == .en)
        #expect(AppLanguage.negotiate("fr", fallback: .ru) == .ru)
    }

    @Test("every server text exists in English and Russian")
    func strings_areComplete() {
        for (key, translations) in Strings.table {
            #expect(translations[.en]?.isEmpty == false, "\(key) en")
            #expect(translations[.ru]?.isEmpty == false, "\(key) ru")
        }
    }

    @Test("generated passwords satisfy the policy, are no common password, and need no escaping in a form body")
    func generatedPasswords() async throws {
        let rules = PasswordRules(policy: .init(), common: try CommonPasswords.shipped())
        for _ in 0..<200 {
            let password = rules.generate()
            try await rules.validate(password)
            #expect(!password.contains(where: { "&=+%#? ".contains($0) }), "\(password)")
        }
    }

    @Test("a generated password is read as sent: no punctuation at its ends, no look-alikes, set apart in SMS and mail (en, ru)")
    func generatedPasswords_readUnambiguously() throws {
        let rules = PasswordRules(policy: .init())
        let composer = MessageComposer(publicURL: "http://gatehouse.test")
        for _ in 0..<2_000 {
            let password = rules.generate()
            #expect(password.first!.isLetter || password.first!.isNumber, "\(password)")
            #expect(password.last!.isLetter || password.last!.isNumber, "\(password)")
            #expect(!password.contains(where: { "0O1lI".contains($0) }), "\(password)")
            for language in [AppLanguage.en, .ru] {
                let sms = composer.temporaryPassword(kind: .sms, to: "+79123456789", password: password, ttl: 3600, language: language)
                #expect(sms.body.hasSuffix(" " + password), "the SMS ends with the password: \(sms.body)")
                let mail = composer.temporaryPassword(kind: .email, to: "a@example.com", password: password, ttl: 3600, language: language)
                let lines = mail.body.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                #expect(lines.contains(password), "the mail has the password on a line of its own: \(mail.body)")
            }
        }
    }

    @Test("ordered ids sort in creation order")
    func orderedIDs() {
        let ids = (0..<2000).map { _ in OrderedID.make() }
        let bytes = ids.map { withUnsafeBytes(of: $0.uuid) { Array($0) } }
        for i in 1..<bytes.count { #expect(bytes[i - 1].lexicographicallyPrecedes(bytes[i])) }
        // version 7, RFC 9562's variant, the time of now, and 62 random bits that differ from id to id
        let millis = UInt64(Date().timeIntervalSince1970 * 1000)
        for id in bytes {
            #expect(id[6] >> 4 == 7 && id[8] >> 6 == 0b10)
            let stamp = id[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            #expect(stamp <= millis + 100 && stamp + 5_000 >= millis)
        }
        #expect(Set(bytes.map { $0[8...] }).count == bytes.count)
        #expect(Set(bytes.map { $0[15] }).count > 200)
    }
}
