import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// The admin API (docs/operators.md, "The admin API"): a business system keeps its client records
/// with an admin key of the right scope, never with a person's session; each change is audited as
/// the key.
@Suite("The admin API")
struct AdminAPITests {
    static let file = [
        #"{"phone":"8 (912) 345-67-89","firstName":"Ivan (record)","birthday":"1990-05-17","room":"Room 12","base":"Base North","parts":[{"domainId":"zone-1","name":"North shore","forfeit":150.5,"isBanned":false,"discount":10}]}"#,
        #"{"phone":"+79990000001","firstName":"Olga","parts":[{"domainId":"z","name":"Z","forfeit":-1,"isBanned":false,"discount":5}]}"#,
        #"{"phone":"+79990000002","lastName":"Sidorova"}"#,
    ].joined(separator: "\n")

    func importing(_ app: TestHarness, _ text: String, key: String, query: String = "", contentType: String = "application/x-ndjson") async throws -> TestResponse {
        try await app.v1.post(AdminAPI.importClients.path + query, body: ByteBuffer(string: text), contentType: contentType, token: key)
    }

    @Test("the wire walk: a bulk import reports its bad row and applies the rest, a dry run and a re-import change nothing; the registered phone binds; GET, PUT and DELETE one record; each change audited as the key", arguments: TestEngine.once)
    func importBindSaveDelete(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let key = try #require(try await ConsoleCommands.createKey(configuration: app.configuration, name: "CRM", scopes: ["clients:read,clients:write"], as: "alice").key)
            let path = AdminAPI.client.path(["phone": "+79123456789"])

            // MUT
            let first = try await importing(app, Self.file, key: key)
            let dry = try await importing(app, Self.file.replacingOccurrences(of: "Sidorova", with: "Sidorova-Ivanova"), key: key, query: "?dryRun=true")
            let again = try await importing(app, Self.file, key: key)
            try await app.registerPhoneAccount(phone: "+79123456789", email: nil)
            let user = try await app.user(try await app.login("+79123456789", "secret-91!"))
            let read = try await app.v1.get(path, token: key)
            let saved = try await app.v1.put(path, body: Array(#"{"firstName":"Ivan (record)","room":"Room 7","base":"Base South"}"#.utf8), contentType: "application/json", token: key)
            let userAfter = try await app.user(try await app.login("+79123456789", "secret-91!"))
            let deleted = try await app.v1.delete(path, token: key)
            let gone = try await app.v1.get(path, token: key)

            // validate
            let report = try first.decoded(as: ClientImportReport.self)
            #expect(first.status == .ok && report.created == 2 && report.refused.map(\.line) == [2] && report.applied, "\(first.text)")
            #expect(report.refused.first?.reason.contains("forfeit") == true, "\(report.refused)")
            let preview = try dry.decoded(as: ClientImportReport.self)
            #expect(preview.updated == 1 && preview.unchanged == 1 && !preview.applied, "\(dry.text)")
            let repeated = try again.decoded(as: ClientImportReport.self)
            #expect(repeated.unchanged == 2 && repeated.updated == 0, "the dry run changed nothing: \(again.text)")
            #expect(user.room == "Room 12" && user.base == "Base North" && user.parts.first?.discount == 10)
            let record = try read.decoded(as: AdminClient.self)
            #expect(read.status == .ok && record.phone == "+79123456789" && record.firstName == "Ivan (record)" && record.accountId != nil, "\(read.text)")
            let after = try saved.decoded(as: AdminClient.self)
            #expect(saved.status == .ok && after.room == "Room 7" && after.parts.isEmpty && after.accountId == record.accountId, "\(saved.text)")
            #expect(userAfter.room == "Room 7" && userAfter.base == "Base South" && userAfter.parts.isEmpty)
            #expect(deleted.status == .noContent && gone.status == .notFound && gone.text.contains("client_not_found"))
            let keyID = try #require(try await ConsoleCommands.listKeys(configuration: app.configuration).first?.id.uuidString.lowercased())
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.clientsImported, .clientSaved, .clientDeleted, .adminKeyCreated]))
            #expect(events.map(\.kind) == ["client.deleted", "client.saved", "clients.imported", "clients.imported", "admin_key.created"])
            #expect(events.dropLast().allSatisfy { $0.actorType == "admin_key" && $0.actorID == keyID })
            #expect(events.first?.account == record.accountId && events.first?.detail["phone"] == "+7…89", "the event names the account, the phone masked")
            #expect(events.last?.actorID == "alice" && events.last?.detail["scopes"] == "clients:read clients:write")
            let reads = try await app.services.audit.events(AuditLog.Query(kinds: [.clientRead, .clientsPreviewed]))
            #expect(reads.map(\.kind) == ["client.read", "client.read", "clients.previewed"], "every call is audited, reads and dry runs too")
            #expect(reads.first?.detail["found"] == "no" && reads[1].detail["found"] == "yes" && reads.allSatisfy { $0.actorID == keyID })
        }
    }

    @Test("refusals: no key, a person's session and a disabled key are 401; a key without the scope 403 insufficient_scope; a bad field 400; an unknown phone 404; a bad format 415 or 400", arguments: TestEngine.once)
    func refusals(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let reader = try #require(try await ConsoleCommands.createKey(configuration: app.configuration, name: "Reports", scopes: ["clients:read"], as: nil).key)
            let writer = try #require(try await ConsoleCommands.createKey(configuration: app.configuration, name: "CRM", scopes: ["clients:write"], as: nil))
            let person = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let path = AdminAPI.client.path(["phone": "+79123456789"])
            let body = Array(#"{"room":"Room 1"}"#.utf8)

            // MUT
            let none = try await app.v1.put(path, body: body, contentType: "application/json")
            let session = try await app.v1.put(path, body: body, contentType: "application/json", token: person.token)
            let unscoped = try await app.v1.put(path, body: body, contentType: "application/json", token: reader)
            let writerReads = try await app.v1.get(path, token: writer.key)
            let badField = try await app.v1.put(path, body: Array(#"{"birthday":"1990-02-30"}"#.utf8), contentType: "application/json", token: writer.key)
            let missing = try await app.v1.get(path, token: reader)
            let badType = try await importing(app, "phone\n+79123456789", key: try #require(writer.key), contentType: "application/pdf")
            let badFormat = try await importing(app, "x", key: try #require(writer.key), query: "?format=xml")
            #expect(try await ConsoleCommands.disableKey(configuration: app.configuration, id: writer.id.uuidString, as: nil))
            let disabled = try await app.v1.put(path, body: body, contentType: "application/json", token: writer.key)

            // validate
            #expect(none.status == .unauthorized && none.headers[.wwwAuthenticate] == "Bearer" && none.text.contains("\"code\":\"unauthorized\""))
            #expect(session.status == .unauthorized, "a person's session is no admin key")
            #expect(unscoped.status == .forbidden && unscoped.text.contains("insufficient_scope"), "\(unscoped.text)")
            #expect(writerReads.status == .forbidden, "clients:write does not read")
            #expect(badField.status == .badRequest && badField.text.contains("invalid_parameter") && badField.text.contains("birthday"), "\(badField.text)")
            #expect(missing.status == .notFound && missing.text.contains("client_not_found"))
            #expect(badType.status == .unsupportedMediaType && badFormat.status == .badRequest, "\(badType.text) \(badFormat.text)")
            #expect(disabled.status == .unauthorized)
            let count = try await app.services.clients.recordAndAccount(phone: "+79123456789")
            #expect(count == nil, "nothing was written")
        }
    }
}
