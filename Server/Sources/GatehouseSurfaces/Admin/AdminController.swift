import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import HTTPTypes
import Hummingbird
import NIOCore

/// The admin API (`/admin/v1`, docs/operators.md "The admin API"): a business's systems keep
/// their client records with an admin key. The key is checked before the body is read: no key
/// (or an unknown or disabled one) is 401, a key without the operation's scope 403
/// `insufficient_scope`. Every change is in the audit trail as the key (`admin_key` and its id).
/// Errors are problem documents (`ProblemDocuments`).
package struct AdminController: Sendable {
    package let keys: AdminKeys
    package let clients: ClientRecords
    package let accountImport: AccountImport
    package let accounts: AccountAdministration
    package let webhooks: WebhookEndpoints
    package let outbox: OperatorOutbox
    package let limits: GatehouseConfiguration.Limits
    package let operators: GatehouseConfiguration.Operators
    package let edge: SurfaceEdge

    package init(keys: AdminKeys, clients: ClientRecords, accountImport: AccountImport, accounts: AccountAdministration, webhooks: WebhookEndpoints,
                 outbox: OperatorOutbox, limits: GatehouseConfiguration.Limits, operators: GatehouseConfiguration.Operators, edge: SurfaceEdge) {
        self.keys = keys
        self.clients = clients
        self.accountImport = accountImport
        self.accounts = accounts
        self.webhooks = webhooks
        self.outbox = outbox
        self.limits = limits
        self.operators = operators
        self.edge = edge
    }

    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        router.route(AdminAPI.client, use: client)
        router.route(AdminAPI.saveClient, use: save)
        router.route(AdminAPI.deleteClient, use: delete)
        router.route(AdminAPI.importClients, use: importFile)
        router.route(AdminAPI.importAccountsFile, use: importAccounts)
        let accounts = self.accounts
        @Sendable func id(_ context: GatehouseRequestContext) -> UUID { context.pathIDs["id"]! }
        on(router, AdminAPI.accounts, .accountsRead) { query, key, request, context in
            try await accounts.list(query, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.account, .accountsRead) { _, key, request, context in
            try await accounts.account(id(context), by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.createAccount, .accountsWrite) { input, key, request, context in
            let audit = origin(request, context)
            return try await accounts.create(input, by: key, origin: RequestOrigin(ip: audit.ip, language: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en),
                                                                                 device: audit.device, requestID: audit.requestID))
        }
        on(router, AdminAPI.updateAccount, .accountsWrite) { input, key, request, context in
            try await accounts.update(id(context), input, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.lockAccount, .accountsWrite) { input, key, request, context in
            try await accounts.lock(id(context), reason: input.reason, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.unlockAccount, .accountsWrite) { input, key, request, context in
            try await accounts.unlock(id(context), reason: input.reason, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.endSessions, .accountsWrite) { input, key, request, context in
            try await accounts.endSessions(id(context), reason: input.reason, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.removeSecondFactors, .accountsWrite) { input, key, request, context in
            try await accounts.removeSecondFactors(id(context), input, by: key, origin: origin(request, context))
        }
        on(router, AdminAPI.deleteAccount, .accountsWrite) { input, key, request, context in
            try await accounts.delete(id(context), reason: input.reason, by: key, origin: origin(request, context))
        }
        webhookRoutes(to: router)
    }

    private func webhookRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        let webhooks = self.webhooks
        let outbox = self.outbox
        @Sendable func id(_ context: GatehouseRequestContext) -> UUID { context.pathIDs["id"]! }
        @Sendable func wire(_ endpoint: WebhookEndpoint) -> AdminWebhookEndpoint {
            AdminWebhookEndpoint(id: endpoint.id, url: endpoint.url, description: endpoint.description, eventTypes: endpoint.eventTypes,
                                 createdAt: endpoint.createdAt, disabledAt: endpoint.disabledAt)
        }
        let notFound = GatehouseError.notFound(.webhookNotFound, "error.plain").withText("There is no such webhook endpoint.")
        on(router, AdminAPI.webhooks, .webhooksWrite) { _, _, _, _ in
            AdminWebhookList(items: try await webhooks.list().map(wire))
        }
        on(router, AdminAPI.createWebhook, .webhooksWrite) { input, key, _, _ in
            let (endpoint, secret) = try await webhooks.create(url: input.url, description: input.description, eventTypes: input.eventTypes ?? [], by: key)
            return AdminWebhookSecret(endpoint: wire(endpoint), secret: secret)
        }
        on(router, AdminAPI.disableWebhook, .webhooksWrite) { _, key, _, context in
            guard try await webhooks.disable(id(context), by: key) else { throw notFound }
            return NoContent()
        }
        on(router, AdminAPI.rotateWebhookSecret, .webhooksWrite) { _, key, _, context in
            guard let secret = try await webhooks.rotateSecret(id(context), by: key), let endpoint = try await webhooks.endpoint(id(context)) else { throw notFound }
            return AdminWebhookSecret(endpoint: wire(endpoint), secret: secret)
        }
        on(router, AdminAPI.webhookDeliveries, .webhooksWrite) { query, _, _, context in
            guard try await webhooks.endpoint(id(context)) != nil else { throw notFound }
            let status = query.state.flatMap { OutboxMessageModel.Status(rawValue: $0.rawValue) }
            let items = try await outbox.webhookDeliveries(endpoint: id(context), status: status)
                .prefix(min(query.limit ?? 50, 100))
                .map { entry in
                    AdminWebhookDelivery(id: entry.id, type: entry.subject ?? "", state: AdminDeliveryState(rawValue: entry.status) ?? .pending,
                                         attempts: entry.attempts, createdAt: entry.createdAt,
                                         nextAttemptAt: entry.status == "pending" ? entry.nextAttemptAt : nil, deliveredAt: entry.sentAt, lastError: entry.lastError)
                }
            return AdminWebhookDeliveryList(items: Array(items))
        }
        on(router, AdminAPI.retryWebhookDelivery, .webhooksWrite) { _, key, request, context in
            guard try await outbox.retryWebhook(id(context), reason: "retried by the admin API", by: key, origin: origin(request, context)) else {
                throw GatehouseError.notFound(.deliveryNotFound, "error.plain").withText("There is no webhook delivery of this id that was given up on.")
            }
            return NoContent()
        }
    }

    /// An admin operation with a JSON answer: the key and its scope checked first (401, 403), then the path's id (404),
    /// then the input — nothing (`NoContent`) or the JSON body — and the handler, which acts as the key
    /// (`AuditActor.adminKey`).
    private func on<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ router: some RouterMethods<GatehouseRequestContext>, _ endpoint: Endpoint<Input, Output>, _ scope: AdminScope,
        use handler: @escaping @Sendable (Input, AuditActor, Request, GatehouseRequestContext) async throws -> Output
    ) {
        let limits = self.limits
        on(router, endpoint, scope, read: { request in
            if let none = NoContent() as? Input { return none }
            return try await V1Body.decode(Input.self, from: request, limits: limits)
        }, use: handler)
    }

    /// The same, for an operation whose input is its query (`EndpointQuery`).
    private func on<Query: EndpointQuery, Output: Encodable & Sendable>(
        _ router: some RouterMethods<GatehouseRequestContext>, _ endpoint: Endpoint<Query, Output>, _ scope: AdminScope,
        use handler: @escaping @Sendable (Query, AuditActor, Request, GatehouseRequestContext) async throws -> Output
    ) {
        on(router, endpoint, scope, read: { request in try Query.read(request) }, use: handler)
    }

    private func on<Input: Sendable, Output: Encodable & Sendable>(
        _ router: some RouterMethods<GatehouseRequestContext>, _ endpoint: Endpoint<Input, Output>, _ scope: AdminScope,
        read: @escaping @Sendable (Request) async throws -> Input,
        use handler: @escaping @Sendable (Input, AuditActor, Request, GatehouseRequestContext) async throws -> Output
    ) {
        router.on(RouterPath(endpoint.path), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!) { request, context in
            let key = try await authorize(request, scope)
            let context = try endpoint.declaration.readPath(context)
            let output = try await handler(try await read(request), .adminKey(key.id.uuidString.lowercased()), request, context)
            if Output.self == NoContent.self { return JSONResponse.noContent() }
            return try JSONResponse.make(output, status: .init(code: endpoint.successStatus))
        }
    }

    private func authorize(_ request: Request, _ scope: AdminScope) async throws -> AdminKeyRecord {
        guard let token = request.bearerToken, let key = try await keys.authenticate(token) else { throw GatehouseError.unauthorized }
        guard key.allows(scope) else {
            throw GatehouseError(.forbidden, .insufficientScope, LocalizedText("error.plain", ["This admin key does not have the scope \(scope.rawValue)."]))
        }
        return key
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> AuditOrigin {
        AuditOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                    device: request.headers[.userAgent], requestID: context.requestID)
    }

    /// The path's phone, percent-decoded (`%2B79…`, `+7%20912…` are how a client library writes `+7 912…`).
    private func phone(_ context: GatehouseRequestContext) -> String {
        let raw = context.parameters.get("phone") ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private static let notFound = GatehouseError.notFound(.clientNotFound, "error.plain").withText("No client record has this phone.")

    private func answer(phone: String) async throws -> Response {
        guard let found = try await clients.recordAndAccount(phone: phone) else { throw Self.notFound }
        return try Self.answer(found)
    }

    private static func answer(_ found: (ClientRecord, UUID?)) throws -> Response {
        let (record, account) = found
        let body = AdminClient(phone: record.phone, firstName: record.firstName, lastName: record.lastName, middleName: record.middleName,
                               email: record.email, birthday: record.birthday, room: record.room, base: record.base, parts: record.parts,
                               accountId: account)
        return try JSONResponse.make(body, status: .ok)
    }

    @Sendable func client(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let key = try await authorize(request, .clientsRead)
        guard let found = try await clients.read(phone: phone(context), by: .adminKey(key.id.uuidString.lowercased()), origin: origin(request, context)) else {
            throw Self.notFound
        }
        return try Self.answer(found)
    }

    @Sendable func save(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let key = try await authorize(request, .clientsWrite)
        let fields = try await V1Body.decode(AdminClientFields.self, from: request, limits: limits)
        let record = ClientRecord(phone: phone(context), firstName: fields.firstName, lastName: fields.lastName, middleName: fields.middleName,
                                  email: fields.email, birthday: fields.birthday, room: fields.room, base: fields.base, parts: fields.parts ?? [])
        _ = try await clients.save(record, by: .adminKey(key.id.uuidString.lowercased()), origin: origin(request, context))
        return try await answer(phone: phone(context))
    }

    @Sendable func delete(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let key = try await authorize(request, .clientsWrite)
        guard try await clients.delete(phone: phone(context), by: .adminKey(key.id.uuidString.lowercased()), origin: origin(request, context)) else {
            throw Self.notFound
        }
        return JSONResponse.noContent()
    }

    @Sendable func importFile(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let key = try await authorize(request, .clientsWrite)
        let query = request.uri.queryParameters
        let media = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let format: ClientRecords.Format
        switch (query["format"].map(String.init), media) {
        case ("csv", _), (nil, "text/csv"): format = .csv
        case ("jsonl", _), (nil, "application/x-ndjson"), (nil, "application/jsonl"), (nil, "application/jsonlines"), (nil, nil): format = .jsonLines
        case (nil, let other?):
            throw GatehouseError(.unsupportedMediaType, .unsupportedMediaType,
                                 LocalizedText("error.unsupportedMediaType", [String(other.prefix(60)), "text/csv or application/x-ndjson"]))
        case (let other?, _):
            throw QueryError(name: "format", value: other, expected: "jsonl or csv").problem
        }
        let dryRun: Bool
        switch query["dryRun"].map(String.init) {
        case nil, "false": dryRun = false
        case "true": dryRun = true
        case let other?: throw QueryError(name: "dryRun", value: other, expected: "true or false").problem
        }
        let buffer = try await request.collectBody(upTo: operators.importMaxBytes)
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self) else {
            throw GatehouseError.invalid(.malformedBody, "error.plain", "The file is not UTF-8 text.")
        }
        let report = try await clients.importFile(text, format: format, by: .adminKey(key.id.uuidString.lowercased()), dryRun: dryRun)
        return try JSONResponse.make(ClientImportReport(created: report.created, updated: report.updated, unchanged: report.unchanged,
                                                        refused: report.refused.map { .init(line: $0.line, reason: $0.reason) },
                                                        applied: !dryRun), status: .ok)
    }

    /// Accounts with their old hashes (docs/migrating.md): the body is read as it arrives, each line imported on its
    /// own through the CLI's own reader. A body past `GATEHOUSE_ACCOUNT_IMPORT_MAX_BYTES` is 413: refused before
    /// anything when its length says so, else where it passes the limit (the rows before are in; an import run again
    /// adds nothing twice).
    @Sendable func importAccounts(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let key = try await authorize(request, .accountsImport)
        let media = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard media == nil || ["application/x-ndjson", "application/jsonl", "application/jsonlines", "text/plain"].contains(media!) else {
            throw GatehouseError(.unsupportedMediaType, .unsupportedMediaType,
                                 LocalizedText("error.unsupportedMediaType", [String(media!.prefix(60)), "application/x-ndjson"]))
        }
        let dryRun: Bool
        switch request.uri.queryParameters["dryRun"].map(String.init) {
        case nil, "false": dryRun = false
        case "true": dryRun = true
        case let other?: throw QueryError(name: "dryRun", value: other, expected: "true or false").problem
        }
        let limit = operators.accountImportMaxBytes
        let tooLarge = GatehouseError.bodyTooLarge(limit)
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
        var reader = AccountImport.Reader(accountImport, options: .init(dryRun: dryRun), by: .adminKey(key.id.uuidString.lowercased()))
        var read = 0
        for try await buffer in request.body {
            read += buffer.readableBytes
            guard read <= limit else { throw tooLarge }
            try await reader.feed(buffer.readableBytesView)
        }
        let report = try await reader.finish()
        return try JSONResponse.make(AccountImportReport(imported: report.imported, existing: report.existing,
                                                         refused: report.refused.map { .init(line: $0.line, reason: $0.reason) },
                                                         refusedCount: report.refusedCount, applied: !dryRun), status: .ok)
    }
}
