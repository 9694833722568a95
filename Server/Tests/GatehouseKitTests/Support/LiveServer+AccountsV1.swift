import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseTestSupport

/// `/v1` helpers for the in-process server.
extension LiveServer {
    /// A `/v1` client as an app would make one, sharing the server's clock.
    func accountsClient(store: any SessionStore = InMemorySessionStore(), language: String = "en") -> AccountsClient {
        AccountsClient(baseURL: baseURL, sessionStore: store, language: language, now: { [clock] in clock.now })
    }

    /// The code of the newest message to `destination` that carries one (a notice mailed after
    /// it, such as "your password was changed", carries none).
    func latestCodeV1(to destination: String) async throws -> String {
        guard let code = try await outbox.messages(to: destination).lazy.compactMap(\.code).first else {
            throw LiveServerError("no code sent to \(destination)")
        }
        return code
    }

    /// A signed-up messenger user (`<tag>@example.com`, password `Secret-42!`): an accounts client
    /// and a messenger client on one core, and the account's id.
    func messengerUser(_ tag: String, firstName: String? = nil) async throws -> (accounts: AccountsClient, messenger: MessengerClient, id: UUID) {
        let accounts = accountsClient(store: InMemorySessionStore())
        let email = "\(tag)@example.com"
        _ = try await accounts.requestSignupCode(email: email)
        let code = try await latestCodeV1(to: email)
        let session = try await accounts.signup(SignupRequest(email: email, code: code, password: "Secret-42!", firstName: firstName ?? tag,
                                                              lastName: "Smith", tag: tag, locale: "en"))
        return (accounts, MessengerClient(core: accounts.core), session.account.id)
    }

    /// Signs up a `/v1` account with an email code straight through the client (setup for the
    /// scenarios that start logged out), then moves the clock past the resend cooldown.
    @discardableResult
    func makeV1Account(email: String, tag: String, password: String = "Secret-42!", firstName: String = "Ivan", lastName: String = "Petrov") async throws -> Account {
        let client = accountsClient()
        _ = try await client.requestSignupCode(email: email)
        let code = try await latestCodeV1(to: email)
        let session = try await client.signup(SignupRequest(email: email, code: code, password: password, firstName: firstName, lastName: lastName, tag: tag))
        clock.advance(by: 61)
        return session.account
    }
}

extension MessengerStores {
    /// A fresh folder of its own under the system's temporary directory.
    static func temporary() -> MessengerStores {
        MessengerStores(directory: FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-stores-\(UUID().uuidString)"))
    }
}
