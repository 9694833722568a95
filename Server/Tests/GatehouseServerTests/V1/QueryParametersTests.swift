import Foundation
import GatehouseAPI
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// Every query parameter `/v1` declares is read by its kind's one rule, on every operation that
/// declares it: a bad value, or a missing required parameter, is 400 `invalid_parameter` on that
/// parameter, in the surface's problem format, before anything else is looked up.
@Suite("/v1: declared query parameters")
struct QueryParametersTests {
    static let declared: [any EndpointDeclaration] = V1.Accounts.all + V1.Sessions.all + V1.SecondFactors.all + V1.Passkeys.all + V1.Identities.all + V1.Messenger.all + V1.Apps.all + V1.Wallet.all

    /// A value each kind refuses (free text and cursors take anything: a bad cursor is the service's to refuse).
    static func refused(_ kind: QueryParameter.Kind) -> String? {
        switch kind {
        case .limit: "0"
        case .uuid: "not-an-id"
        case .choice: "bogus"
        case .text, .cursor, .described: nil
        }
    }

    @Test("a value against its parameter's rule, or a required parameter left out, is 400 invalid_parameter naming it")
    func everyDeclaredParameter_isReadByItsRule() async throws {
        try await withApp(.sqlite) { app in
            // setup: a person (the messenger's endpoints need a tag) with a session
            let me = try await app.v1.person("query.rules")
            var checked = 0
            for endpoint in Self.declared where !endpoint.queryParameters.isEmpty && endpoint.method != .post {
                // Path parameters filled with an id nobody has: the query is read first.
                let path = endpoint.path.replacingOccurrences(of: #"\{[A-Za-z]+\}"#, with: UUID().uuidString.lowercased(), options: .regularExpression)
                // What a valid request carries for the required ones (so that only one thing is wrong at a time).
                let valid: [String: String] = Dictionary(uniqueKeysWithValues: endpoint.queryParameters.filter(\.required).compactMap { parameter in
                    if case .choice(let values) = parameter.kind { return (parameter.name, values[0]) } else { return nil }
                })
                for parameter in endpoint.queryParameters {
                    var cases: [(String, String)] = []
                    if let bad = Self.refused(parameter.kind) {
                        var values = valid
                        values[parameter.name] = bad
                        cases.append(("\(parameter.name)=\(bad)", values.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")))
                    }
                    if parameter.required {
                        var values = valid
                        values[parameter.name] = nil
                        cases.append(("no \(parameter.name)", values.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "&")))
                    }
                    for (label, query) in cases {
                        // MUT
                        let response = try await app.v1.send(HTTPRequest.Method(rawValue: endpoint.method.rawValue)!,
                                                             path + (query.isEmpty ? "" : "?" + query), token: me.token)
                        // validate
                        let problem = try expectProblem(response, .badRequest, .invalidParameter)
                        #expect(problem.field == parameter.name, "\(endpoint) \(label): field \(problem.field ?? "none")")
                        #expect(problem.detail.contains(parameter.name), "\(endpoint) \(label): \(problem.detail)")
                        checked += 1
                    }
                }
            }
            // Every operation with a checkable parameter was tried: people, friends, chats, attachments, history,
            // message deletion, sessions, wallet transactions and requests.
            #expect(checked >= 12, "only \(checked) cases")
        }
    }

    @Test("the SDK sends what the server reads: a typed query round-trips through its declared names")
    func typedQueries_roundTrip() throws {
        let id = UUID()
        let requests = RequestsQuery(direction: .incoming, state: .open, with: id, cursor: "abc", limit: 5)
        #expect(try RequestsQuery(from: QueryValues(requests.values)) == requests)
        #expect(Set(requests.values.keys) == Set(RequestsQuery.parameters.map(\.name)))
        let history = HistoryQuery(before: id, limit: 2)
        #expect(try HistoryQuery(from: QueryValues(history.values)) == history)
        #expect(history.values["before"] == id.uuidString.lowercased(), "ids go lower-cased, as the API writes them")
        #expect(try DeletionQuery(from: QueryValues(["for": "everyone"])).scope == .everyone)
        #expect(throws: QueryError(name: "for", value: "", expected: "me or everyone")) { try DeletionQuery(from: QueryValues([:])) }
        #expect(throws: QueryError(name: "limit", value: "-1", expected: "a whole number from 1")) { try PageQuery(from: QueryValues(["limit": "-1"])) }
        #expect(try PageQuery(from: QueryValues(["cursor": "", "limit": ""])) == PageQuery(), "an empty value is an absent one")
    }
}
