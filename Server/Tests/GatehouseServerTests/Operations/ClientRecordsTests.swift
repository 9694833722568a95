import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import Testing

/// The phone-first spec's client records (docs/operators.md, "Client records"): imported in bulk,
/// bound to the account of their verified phone at registration or the next login, shown by
/// `GET /api/users/user`, never changed by a registration.
@Suite("Client records")
struct ClientRecordsTests {
    static func file(_ lines: [String], suffix: String = "jsonl") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("clients-\(UUID().uuidString).\(suffix)").path
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let ivan = #"{"phone":"8 (912) 345-67-89","firstName":"Ivan (record)","lastName":"Petrov (record)","birthday":"1990-05-17","room":"Room 12","base":"Base North","parts":[{"domainId":"zone-1","name":"North shore","forfeit":150.5,"isBanned":false,"discount":10}]}"#

    @Test("the wire walk: an import with a bad row reports it and applies the rest, a second import changes nothing; registering that phone by /api binds the record, /api/users/user shows its room, base and parts, and the record keeps its own data", .tags(.engine), arguments: TestEngine.all)
    func importRegisterAndShow(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let path = try Self.file([Self.ivan, #"{"phone":"12","room":"nowhere"}"#, #"{"phone":"+79990000001","firstName":"Olga"}"#,
                                      #"{"phone":"+7 912 345 67 89","room":"Room 99"}"#])
            defer { try? FileManager.default.removeItem(atPath: path) }

            // MUT
            let first = try await ClientCommands.importFile(configuration: app.configuration, path: path, format: nil, as: "alice")
            let again = try await ClientCommands.importFile(configuration: app.configuration, path: path, format: nil, as: "alice")
            try await app.registerPhoneAccount(phone: "+79123456789", email: nil)
            let token = try await app.login("+79123456789", "secret-91!")
            let user = try await app.user(token)

            // validate
            #expect(first.created == 2 && first.updated == 0 && first.unchanged == 0)
            #expect(first.refused.map(\.line) == [2, 4] && first.refused.first?.reason.contains("not a phone number") == true)
            #expect(first.refused.last?.reason.contains("line 1") == true, "the same phone twice: the later row is refused")
            #expect(again.created == 0 && again.updated == 0 && again.unchanged == 2, "a re-import changes nothing")
            #expect(user.room == "Room 12" && user.base == "Base North")
            #expect(user.parts == [PhonePartnerZone(domainId: "zone-1", name: "North shore", forfeit: 150.5, isBanned: false, discount: 10)])
            #expect(user.firstName == "Ivan" && user.lastName == "Petrov", "the registration's names are the account's")
            #expect(user.birthday == nil, "nothing of the record is copied into the account (a recycled number's record is the last holder's): \(user.birthday ?? "nil")")
            let record = try #require(try await app.services.clients.record(phone: "+79123456789"))
            #expect(record.firstName == "Ivan (record)" && record.lastName == "Petrov (record)" && record.room == "Room 12", "the record is unchanged")
            let imports = try await app.services.audit.events(AuditLog.Query(kinds: [.clientsImported]))
            #expect(imports.count == 2 && imports.allSatisfy { $0.actorType == "system" && $0.actorID == "alice" })
            #expect(imports.last?.detail["created"] == "2" && imports.last?.detail["refused"] == "2", "newest first: the first import is last")
        }
    }

    @Test("a change to a bound record shows on the next /api/users/user at once, though the session and its account are cached; an unbind too", .tags(.engine), arguments: TestEngine.all)
    func boundRecordChange_showsAtOnce(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: a bound record, read once so the session's lookup (with the record) is cached
            let clients = app.services.clients
            _ = try await clients.importFile(Self.ivan, format: .jsonLines, by: .system("test"))
            try await app.registerPhoneAccount(phone: "+79123456789", email: nil)
            let token = try await app.login("+79123456789", "secret-91!")
            let first = try await app.user(token)

            // MUT
            _ = try await clients.importFile(Self.ivan.replacingOccurrences(of: "Room 12", with: "Room 14"), format: .jsonLines, by: .system("test"))
            let changed = try await app.user(token)
            _ = try await clients.unbind(accountID: first.id, reason: "test", by: .system("test"), origin: AuditOrigin())
            let unbound = try await app.user(token)

            // validate
            #expect(first.room == "Room 12")
            #expect(changed.room == "Room 14", "the import's change, not the cached record")
            #expect(unbound.room == nil && unbound.parts.isEmpty, "unbound: no record")
        }
    }

    @Test("a record imported after the account exists binds at the next login; an unverified phone never binds; another account's record is never shown", .tags(.engine), arguments: TestEngine.all)
    func laterBindingAndClaims(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: an /api account with a verified phone, and a /v1 account whose phone is only asked for
            try await app.registerPhoneAccount(phone: "+79123456789", email: nil)
            let before = try await app.user(try await app.login("+79123456789", "secret-91!"))
            let ann = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let asked = try await app.v1.post(V1.Accounts.requestPhoneVerification.path,
                                              PhoneVerificationRequest(phone: "+79990000002", currentPassword: "secret-91!"), token: ann.token)
            #expect(asked.status == .accepted, "\(asked.text)")
            let path = try Self.file([Self.ivan, #"{"phone":"+79990000002","room":"Someone else's room"}"#])
            defer { try? FileManager.default.removeItem(atPath: path) }
            _ = try await ClientCommands.importFile(configuration: app.configuration, path: path, format: nil, as: nil)

            // MUT
            let after = try await app.user(try await app.login("+79123456789", "secret-91!"))
            _ = try await app.v1.login("ann", "secret-91!")

            // validate
            #expect(before.room == nil && before.parts.isEmpty, "no record yet")
            #expect(after.room == "Room 12" && after.parts.count == 1, "bound at the login after the import")
            let bound = try await app.services.audit.events(AuditLog.Query(kinds: [.clientBound]))
            #expect(bound.count == 1 && bound.first?.account == after.id, "only the verified phone's record bound")
            #expect(try await app.services.clients.record(of: ann.account.id) == nil, "an unverified phone never binds")
        }
    }

    @Test("CSV: quoted fields with commas, quotes and a parts cell; phones typed any way read as E.164; an unknown column and bad values are refused with their line")
    func csvAndRefusals() throws {
        // setup
        let clients = ClientRecordFile(defaultCountryCode: "7")
        let csv = """
            phone,firstName,lastName,room,base,birthday,parts
            +79123456789,"Ivan, Jr.","Pe""trov",Room 1,Base 1,17.05.1990,"[{""domainId"":""z"",""name"":""Zone"",""forfeit"":0,""isBanned"":true,""discount"":5}]"
            89123456789,Again,,,,,
            +79990000003,,,,,31.02.1990,
            +79990000004,,,,,,"[{""domainId"":""z"",""name"":""Zone"",""forfeit"":-1,""isBanned"":false,""discount"":5}]"
            """

        // MUT
        let rows = clients.parse(csv, format: .csv)
        let unknown = clients.parse("phone,nickname\n+79123456789,x", format: .csv)

        // validate
        let first = try rows[0].result.get()
        #expect(first.firstName == "Ivan, Jr." && first.lastName == "Pe\"trov" && first.birthday == "1990-05-17")
        #expect(first.parts == [ClientPart(domainId: "z", name: "Zone", forfeit: 0, isBanned: true, discount: 5)])
        #expect(try rows[1].result.get().phone == "+79123456789", "the same phone typed another way (the import refuses the second)")
        #expect(rows[2].line == 4 && (try? rows[2].result.get()) == nil, "31 February")
        #expect(rows[3].line == 5 && (try? rows[3].result.get()) == nil, "a negative forfeit")
        #expect(unknown.count == 1 && (try? unknown[0].result.get()) == nil)
    }

    @Test("a file of more rows than GATEHOUSE_CLIENT_IMPORT_MAX_ROWS (100,000 unless set) is refused whole, naming the first row over, and writes nothing; one of exactly the cap is taken", .tags(.engine), arguments: TestEngine.all)
    func rowCap(engine: TestEngine) async throws {
        // setup
        #expect(GatehouseConfiguration.Operators().importMaxRows == 100_000)
        try await withApp(engine, configure: { $0.operators.importMaxRows = 50 }) { app in
            let rows = (0...50).map { #"{"phone":"+7999\#(String(format: "%07d", $0))"}"# }

            // MUT
            let over = try await app.services.clients.importFile(rows.joined(separator: "\n"), format: .jsonLines, by: .system(nil))
            let exact = try await app.services.clients.importFile(rows.dropLast().joined(separator: "\n"), format: .jsonLines, by: .system(nil))

            // validate
            #expect(over.created == 0 && over.refused.count == 1 && over.refused.first?.line == 51)
            #expect(over.refused.first?.reason == "more than 50 rows: split the file")
            #expect(exact.created == 50 && exact.refused.isEmpty, "exactly the cap")
        }
    }
}
