import ArgumentParser
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehouseServer
import NIOCore
import NIOPosix

@main
struct Gatehouse: AsyncParsableCommand {
    /// ArgumentParser's own start, with the libraries' unreadable errors (a port in use, an unreachable PostgreSQL)
    /// said in words that name the address or the database (`ReadableError`).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            let database = (try? GatehouseConfiguration.fromEnvironment(ProcessInfo.processInfo.environment))?.database
            exit(withError: ReadableError.from(error, database: database) ?? error)
        }
    }

    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "Gatehouse: accounts and identity for iOS apps.",
        version: GatehouseVersion.current,
        subcommands: [Serve.self, Migrate.self, Backup.self, Restore.self, Outbox.self, BcryptSpeed.self, Apps.self, Wallet.self, Accounts.self, Clients.self,
                      AuditTrail.self, Operators.self, AdminKeys.self, Keys.self, OpenIDClients.self, Webhooks.self,
                      OpenAPICommand.self],
        defaultSubcommand: Serve.self
    )
}

/// Reads the environment, printing one clear line and exiting on a bad value.
func loadConfiguration(host: String? = nil, port: Int? = nil) throws -> GatehouseConfiguration {
    var env = ProcessInfo.processInfo.environment
    if let host { env["GATEHOUSE_HOST"] = host }
    if let port { env["GATEHOUSE_PORT"] = String(port) }
    do {
        return try GatehouseConfiguration.fromEnvironment(env)
    } catch let error as ConfigurationError {
        FileHandle.standardError.write(Data("gatehouse: \(error.description)\n".utf8))
        throw ExitCode(78)  // EX_CONFIG
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the server (the default).")

    @Option(help: "Address to listen on (env GATEHOUSE_HOST, default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on (env GATEHOUSE_PORT, default 8080).")
    var port: Int?

    func run() async throws {
        let configuration = try loadConfiguration(host: host, port: port)
        if configuration.http.tasksOnEventLoops {
            // Before anything starts: from here on a task started on an event loop stays there, so a
            // request's handler, the database connection it borrows (`DatabaseProvider.db`) and its
            // answer share a thread, where Swift's own pool added a hand-off each way.
            if !NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor() {
                FileHandle.standardError.write(Data("gatehouse: tasks stay on Swift's own pool (this platform does not let them onto the event loops)\n".utf8))
            }
        }
        try ServerCommands.checkListenable(host: configuration.host, port: configuration.port)
        try ServerCommands.checkBlobFolder(configuration)
        // The banner goes out once the port is bound, so "listening" is true when it is read.
        let app = try await buildApplication(configuration: configuration, onServerRunning: { boundPort in
            for line in ServerCommands.banner(configuration: configuration, port: boundPort) {
                print(line)
            }
            fflush(nil)  // flush stdout even when it is a pipe or a file
        })
        do {
            try await app.runService()
        } catch {
            // Taken between the check above and the bind: the same words.
            try ServerCommands.checkListenable(host: configuration.host, port: configuration.port)
            throw error
        }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run pending database migrations and exit.")

    func run() async throws {
        let configuration = try loadConfiguration()
        try await ServerCommands.migrate(configuration: configuration)
        print("migrations applied")
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Back up the database and the blob folder into an empty folder, while the server runs (docs/deploy.md).")

    @Option(help: "The folder to write (made; must be empty).") var to: String

    func run() async throws {
        let manifest = try await BackupCommands.backup(configuration: loadConfiguration(), to: URL(fileURLWithPath: to))
        print("backed up the \(manifest.engine) database" + (manifest.blobs.map { " and \($0) blobs" } ?? " (blobs stay in the S3 bucket)") + " to \(to)")
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the database and the blob folder with a backup's. Refuses while any instance runs (docs/deploy.md).")

    @Option(help: "A folder written by gatehouse backup.") var from: String

    func run() async throws {
        let manifest = try await BackupCommands.restore(configuration: loadConfiguration(), from: URL(fileURLWithPath: from))
        print("restored the \(manifest.engine) backup of \(manifest.createdAt) (gatehouse \(manifest.gatehouse)); start the server to migrate it if it is older")
    }
}

struct Outbox: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print queued and sent messages (codes, mails) from the outbox.")

    @Option(help: "Only messages to this destination: a phone in any common format (8 916 111-22-33, +79161112233) or an email.")
    var to: String?

    @Option(help: "How many of the newest messages to print.")
    var last: Int = 10

    func run() async throws {
        let configuration = try loadConfiguration()
        let messages = try await ServerCommands.outbox(configuration: configuration, to: to, last: max(1, min(last, 1000)))
        if messages.isEmpty {
            print("outbox is empty" + (to.map { " for \($0)" } ?? ""))
        }
        for message in messages.reversed() {
            print("[\(message.createdAt)] \(message.channel) to \(message.to)" + (message.subject.map { ": \($0)" } ?? ""))
            if let code = message.code { print("  code: \(code)") }
            for line in message.body.split(separator: "\n", omittingEmptySubsequences: false) {
                print("  \(line)")
            }
        }
    }
}

struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Print the OpenAPI 3.1 document the server serves at /openapi.json (to generate a client from a file)."
    )

    @Flag(help: "YAML instead of JSON.") var yaml = false

    func run() throws {
        print(ServerCommands.openAPIDocument(yaml: yaml), terminator: "")
    }
}

struct BcryptSpeed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bcrypt-speed",
        abstract: "Time bcrypt at the configured cost (GATEHOUSE_BCRYPT_COST) on one core, to choose a cost."
    )

    @Option(help: "bcrypt cost (default: GATEHOUSE_BCRYPT_COST, else 10).")
    var cost: Int?

    @Option(help: "How many hashes to time.")
    var count: Int = 20

    func run() async throws {
        let cost = try self.cost ?? loadConfiguration().passwords.bcryptCost
        guard (4...16).contains(cost) else { throw ValidationError("--cost must be 4…16") }
        let seconds = ServerCommands.bcryptSecondsPerHash(cost: cost, count: max(1, count))
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print(String(format: "bcrypt cost %d: %.2f ms per hash, %.1f hashes/s per core, %.1f hashes/s on %d cores",
                     cost, seconds * 1000, 1 / seconds, Double(cores) / seconds, cores))
    }
}

/// `gatehouse apps`: the Sign To Login service's apps and their API keys.
struct Apps: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Register and manage the apps of the Sign To Login service and their API keys.",
        subcommands: [Create.self, List.self, Disable.self, Enable.self, Rotate.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an app and print its API key (shown once).")
        @Option(help: "The app's name.") var name: String
        @Option(name: .customLong("bundle-id"), help: "The iOS bundle ID, e.g. com.example.signer.") var bundleID: String
        @Option(help: "Who answers for the app.") var email: String
        @Option(help: "The app's web page (http or https).") var website: String?
        @Option(help: "A PNG, JPEG or WebP icon file.") var icon: String?
        @Option(help: "The owner: an account's confirmed email (it then sees the app on /v1/apps).") var owner: String?
        @Flag(help: "Print one JSON object (with \"apikey\").") var json = false

        func run() async throws {
            let app = try await AppCommands.create(configuration: loadConfiguration(), name: name, bundleID: bundleID, email: email,
                                                   website: website, iconPath: icon, ownerEmail: owner)
            printApp(app, json: json)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every app.")
        @Flag(help: "Print a JSON array.") var json = false

        func run() async throws {
            let apps = try await AppCommands.list(configuration: loadConfiguration())
            if json { return print(jsonText(apps)) }
            if apps.isEmpty { print("no apps") }
            for app in apps {
                print("\(app.id)  \(app.enabled ? "enabled " : "disabled")  \(app.keyHint)  \(app.bundleId)  \(app.name)  <\(app.email)>"
                      + (app.owner.map { "  owner \($0)" } ?? ""))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an app: its key is refused on every endpoint.")
        @Argument(help: "The app's id or its key.") var app: String
        @Flag(help: "Print one JSON object.") var json = false
        func run() async throws {
            printApp(try await AppCommands.setEnabled(configuration: loadConfiguration(), idOrKey: app, enabled: false), json: json)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled app again.")
        @Argument(help: "The app's id or its key.") var app: String
        @Flag(help: "Print one JSON object.") var json = false
        func run() async throws {
            printApp(try await AppCommands.setEnabled(configuration: loadConfiguration(), idOrKey: app, enabled: true), json: json)
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give an app a new key; the old one stops working at once.")
        @Argument(help: "The app's id or its key.") var app: String
        @Flag(help: "Print one JSON object (with \"apikey\").") var json = false
        func run() async throws {
            printApp(try await AppCommands.rotate(configuration: loadConfiguration(), idOrKey: app), json: json)
        }
    }
}

/// `gatehouse wallet`: money into wallets, and the ledger's audit.
struct Wallet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Credit wallets, give top-ups back and audit the ledger.",
        subcommands: [Credit.self, Refund.self, Audit.self]
    )

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give a top-up back: refunded at the payment provider when paid there, then moved out of the wallet (once).")
        @Option(help: "The top-up's movement id, as the wallet's history shows it.") var transfer: String
        @Option(help: "Why, kept in the audit trail and the movement's comment.") var reason: String
        @Option(name: .customLong("as"), help: "Who is refunding, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let done = try await WalletCommands.refund(configuration: loadConfiguration(), transfer: transfer, reason: reason, as: person)
            if json { return print(jsonText(["result": done.rawValue])) }
            switch done {
            case .refunded: print("refunded top-up \(transfer.lowercased()) at the payment provider and took it back from the wallet")
            case .reversed: print("reversed top-up \(transfer.lowercased()) (credited by hand: the ledger alone)")
            case .before: print("top-up \(transfer.lowercased()) was given back before: nothing changed")
            case .pending: print("the payment provider accepted the refund of \(transfer.lowercased()); the wallet follows when it confirms")
            }
        }
    }

    struct Credit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put money into the wallet of a verified phone (where a payment provider would).")
        @Option(help: "The wallet's verified phone, e.g. +79991234567.") var phone: String
        @Option(help: "Roubles, with at most two decimals, e.g. 100.00.") var amount: String
        @Option(help: "Why, shown in the wallet's history.") var reason: String?
        @Option(help: "The payment's id at your provider: the same reference credits once, however often it is repeated.") var reference: String?
        @Option(name: .customLong("as"), help: "Who is crediting, for the audit trail (the event's actor is the system, on their behalf).") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let credit = try await WalletCommands.credit(configuration: loadConfiguration(), phone: phone, amount: amount, reason: reason,
                                                         reference: reference, as: person)
            if json { return print(jsonText(credit)) }
            print("credited \(Kopecks.format(credit.amount, grouping: " ")) RUB to \(phone): balance \(Kopecks.format(credit.balance, grouping: " ")) RUB (transfer \(credit.transferId))")
        }
    }

    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the ledger: balanced transactions, balances equal to their entries, none negative, all summing to zero.")

        func run() async throws {
            let problems = try await WalletCommands.audit(configuration: loadConfiguration())
            if problems.isEmpty { return print("ledger ok") }
            problems.forEach { print($0) }
            throw ExitCode(1)
        }
    }
}

struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find an account, see it, end its sessions, lock or unlock it, turn its second factor off.",
        subcommands: [Find.self, Show.self, RevokeSessions.self, Lock.self, Unlock.self, RemoveSecondFactor.self, Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import accounts from another system, one JSON object per line, with the password hashes it kept (docs/migrating.md).")
        @Argument(help: "The file: one JSON object per line.") var file: String
        @Flag(name: .customLong("dry-run"), help: "Check every line; import nothing.") var dryRun = false
        @Option(name: .customLong("firebase-signer-key"), help: "Firebase's base64_signer_key (rows with a salt are Firebase's).") var signerKey: String?
        @Option(name: .customLong("firebase-salt-separator"), help: "Firebase's base64_salt_separator.") var saltSeparator: String?
        @Option(name: .customLong("firebase-rounds"), help: "Firebase's rounds.") var rounds: Int = 8
        @Option(name: .customLong("firebase-mem-cost"), help: "Firebase's mem_cost.") var memCost: Int = 14
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            var firebase: ForeignPasswordHash.FirebaseScrypt?
            if let signerKey {
                guard let key = Data(base64Encoded: signerKey), let separator = Data(base64Encoded: saltSeparator ?? "") else {
                    print("--firebase-signer-key and --firebase-salt-separator are base64, as Firebase shows them")
                    throw ExitCode(64)
                }
                firebase = .init(signerKey: Array(key), saltSeparator: Array(separator), rounds: rounds, memoryCost: memCost)
            }
            let summary = try await AccountCommands.importAccounts(configuration: loadConfiguration(), path: file, dryRun: dryRun, firebase: firebase, as: person,
                                                                   progress: { line in FileHandle.standardError.write(Data("\(line) lines\n".utf8)) })
            if json { return print(jsonText(summary)) }
            print("\(dryRun ? "would import" : "imported") \(summary.imported), already here \(summary.existing), refused \(summary.refusedCount)")
            for line in summary.refused { print("  \(line)") }
            if summary.refusedCount > 0 { throw ExitCode(1) }
        }
    }

    struct Find: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the account an id, confirmed email, verified phone, login or tag names.")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let account = try await AccountCommands.show(configuration: loadConfiguration(), query: query, events: 1)
            if json { return print(jsonText(account)) }
            print("\(account.id) \(account.login ?? "-") \(account.email ?? "-")\(account.emailConfirmed ? "" : " (unconfirmed)") \(account.phone ?? "-")\(account.phoneVerified ? "" : " (unverified)")")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show an account: profile, sessions, client record and its latest security events.")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Option(help: "How many of the latest events.") var events = 10
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let account = try await AccountCommands.show(configuration: loadConfiguration(), query: query, events: events)
            if json { return print(jsonText(account)) }
            print("account \(account.id), since \(WireDates.iso8601String(from: account.createdAt))")
            print("  login \(account.login ?? "-"), name \(account.name ?? "-")")
            print("  email \(account.email ?? "-")\(account.emailConfirmed ? " (confirmed)" : ""), phone \(account.phone ?? "-")\(account.phoneVerified ? " (verified)" : "")")
            if let locked = account.locked { print("  LOCKED since \(WireDates.iso8601String(from: locked.since)): \(locked.reason)") }
            print("  client record: " + (account.client.map { "room \($0.room ?? "none"), base \($0.base ?? "none"), \($0.partnerZones) partner zone(s)" } ?? "none"))
            print("  authenticator app: \(account.authenticatorAppSince.map { "on since " + WireDates.iso8601String(from: $0) } ?? "off")")
            print("  \(account.passkeys.count) passkey(s)")
            for p in account.passkeys {
                print("    \(p.id) \(p.name), added \(WireDates.iso8601String(from: p.createdAt)), last used \(p.lastUsedAt.map(WireDates.iso8601String(from:)) ?? "never")")
            }
            print("  \(account.sessions.count) session(s)")
            for s in account.sessions { print("    \(s.id) \(s.device ?? "-") from \(s.ip ?? "-"), last used \(WireDates.iso8601String(from: s.lastUsedAt))") }
            print("  latest events")
            for e in account.events { print("    \(WireDates.iso8601String(from: e.at)) \(e.kind)\(e.count > 1 ? " ×\(e.count)" : "") by \(e.actor)\(e.ip.map { " from " + $0 } ?? "")") }
        }
    }

    struct RevokeSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke-sessions", abstract: "End every session of an account (its next request is 401).")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Option(help: "Why, for the audit trail (required).") var reason: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let count = try await AccountCommands.revokeSessions(configuration: loadConfiguration(), query: query, reason: reason, as: person)
            print("\(count) session(s) ended")
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lock an account: its sessions end and no sign-in works until it is unlocked.")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Option(help: "Why, for the audit trail (required).") var reason: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await AccountCommands.setLocked(true, configuration: loadConfiguration(), query: query, reason: reason, as: person)
            print(changed ? "locked" : "locked already")
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unlock a locked account.")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Option(help: "Why, for the audit trail (required).") var reason: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await AccountCommands.setLocked(false, configuration: loadConfiguration(), query: query, reason: reason, as: person)
            print(changed ? "unlocked" : "not locked")
        }
    }
}

extension Accounts {
    struct RemoveSecondFactor: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-second-factor",
            abstract: "Turn an account's second factors off: its authenticator app with its recovery codes, and every passkey (the person lost them, or a thief added one, and the person proved who they are another way).")
        @Argument(help: "An id, email, phone, login or @tag.") var query: String
        @Option(help: "Why, and how the person proved who they are, for the audit trail (required).") var reason: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await AccountCommands.removeSecondFactor(configuration: loadConfiguration(), query: query, reason: reason, as: person)
            print(changed ? "second factors removed (the authenticator app and every passkey)" : "no second factor")
        }
    }
}

struct Operators: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Who may sign in to the operator console (/operator): name, role, password and a TOTP second factor.",
        subcommands: [Create.self, List.self, Disable.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an operator. The password is read from standard input (first line); the TOTP secret is printed once, as an otpauth:// URI for an authenticator app.")
        @Argument(help: "The name they sign in with.") var name: String
        @Option(help: "admin, support or read-only.") var role: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            // At a terminal: asked for twice, never echoed. From a pipe: its first line.
            let interactive = isatty(STDIN_FILENO) == 1
            guard let password = readSecret(interactive ? "Password for \(name): " : nil), !password.isEmpty else {
                throw ValidationError("give the operator's password on standard input, e.g. printf '%s\\n' \"$PASSWORD\" | gatehouse operators create …")
            }
            if interactive, readSecret("Repeat it: ") != password {
                throw ValidationError("the two passwords differ; nothing was made")
            }
            let made = try await ConsoleCommands.createOperator(configuration: loadConfiguration(), name: name, role: role, password: password, as: person)
            if json { return print(jsonText(made)) }
            print("operator \(made.name) (\(made.role)) made")
            print("add this to their authenticator app (shown once):")
            print("  \(made.otpauth)")
            print("  or type the secret: \(made.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List operators.")
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let all = try await ConsoleCommands.listOperators(configuration: loadConfiguration())
            if json { return print(jsonText(all)) }
            for line in all { print("\(line.name) \(line.role)\(line.disabled ? " (disabled)" : "")") }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an operator for good; their console sessions end.")
        @Argument(help: "Their name.") var name: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await ConsoleCommands.disableOperator(configuration: loadConfiguration(), name: name, as: person)
            print(changed ? "disabled" : "no such enabled operator")
            if !changed { throw ExitCode(1) }
        }
    }
}

struct AdminKeys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-keys",
        abstract: "Keys business systems call the admin API (/admin/v1) with, each with its scopes.",
        subcommands: [Create.self, List.self, Disable.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key; it is printed once.")
        @Argument(help: "What it is for (the system that holds it).") var name: String
        @Option(help: "clients:read, clients:write or accounts:import (repeat, or separate with commas).") var scope: [String] = []
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let made = try await ConsoleCommands.createKey(configuration: loadConfiguration(), name: name, scopes: scope, as: person)
            if json { return print(jsonText(made)) }
            print("admin key \(made.id) (\(made.scopes.joined(separator: " "))), shown once:")
            print("  \(made.key ?? "")")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List admin keys (never the keys themselves).")
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let all = try await ConsoleCommands.listKeys(configuration: loadConfiguration())
            if json { return print(jsonText(all)) }
            for key in all {
                print("\(key.id) \(key.name) \(key.hint) \(key.scopes.joined(separator: " "))\(key.disabled ? " (disabled)" : "")")
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a key for good.")
        @Argument(help: "Its id.") var id: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await ConsoleCommands.disableKey(configuration: loadConfiguration(), id: id, as: person)
            print(changed ? "disabled" : "no such enabled key")
            if !changed { throw ExitCode(1) }
        }
    }
}

struct Clients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The business's client records, which accounts bind to by their verified phone.", subcommands: [Import.self])

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import client records: JSON lines or CSV with a header row (phone, firstName, lastName, middleName, email, birthday, room, base, parts). Idempotent by phone; refused rows are reported with their line.")
        @Argument(help: "The file.") var file: String
        @Option(help: "jsonl or csv (by default, by the file's extension).") var format: String?
        @Option(name: .customLong("as"), help: "Who is importing, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let report = try await ClientCommands.importFile(configuration: loadConfiguration(), path: file, format: format, as: person)
            // Refused rows exit 2 in both forms: a script reading the JSON learns it from the status too.
            if json {
                print(jsonText(report))
                if !report.refused.isEmpty { throw ExitCode(2) }
                return
            }
            print("\(report.created) created, \(report.updated) updated, \(report.unchanged) unchanged, \(report.refused.count) refused")
            for refusal in report.refused { print("line \(refusal.line): \(refusal.reason)") }
            if !report.refused.isEmpty { throw ExitCode(2) }
        }
    }
}

struct AuditTrail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Read the audit trail.", subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the audit trail's events as JSON lines, oldest first (no secret is ever in them).")
        @Option(help: "From this moment on: an ISO 8601 date or time (2026-11-01, 2026-11-01T12:00:00Z).") var since: String
        @Option(help: "Before this moment (the same forms).") var until: String?
        @Option(help: "Only the events of this account id.") var account: String?
        @Option(help: "Only events of this kind (repeatable), such as login.failed or wallet.credited.") var kind: [String] = []

        func run() async throws {
            guard let from = Self.moment(since) else { throw ValidationError("--since is not an ISO 8601 date or time") }
            var to: Date?
            if let until {
                guard let moment = Self.moment(until) else { throw ValidationError("--until is not an ISO 8601 date or time") }
                to = moment
            }
            var accountID: UUID?
            if let account {
                guard let id = UUID(uuidString: account) else { throw ValidationError("--account is not an account id") }
                accountID = id
            }
            let count = try await AuditCommands.export(configuration: loadConfiguration(), since: from, until: to, account: accountID,
                                                       kinds: kind) { print($0) }
            FileHandle.standardError.write(Data("\(count) events\n".utf8))
        }

        static func moment(_ text: String) -> Date? {
            let full = ISO8601DateFormatter()
            if let date = full.date(from: text) { return date }
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            return day.date(from: text)
        }
    }
}

func printApp(_ app: AppCommands.Output, json: Bool) {
    if json { return print(jsonText(app)) }
    print("app \(app.id): \(app.name) (\(app.bundleId)), \(app.enabled ? "enabled" : "disabled")")
    if let key = app.apikey {
        print("API key (shown once, keep it now): \(key)")
    } else {
        print("key \(app.keyHint)")
    }
}

/// One line from standard input; at a terminal, after `prompt` on standard error and without echoing what is typed.
func readSecret(_ prompt: String?) -> String? {
    guard let prompt, isatty(STDIN_FILENO) == 1 else { return readLine(strippingNewline: true) }
    FileHandle.standardError.write(Data(prompt.utf8))
    var original = termios()
    tcgetattr(STDIN_FILENO, &original)
    var silent = original
    silent.c_lflag &= ~tcflag_t(ECHO)
    tcsetattr(STDIN_FILENO, TCSANOW, &silent)
    defer {
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
        FileHandle.standardError.write(Data("\n".utf8))
    }
    return readLine(strippingNewline: true)
}

/// Every `--json` answer: dates in ISO 8601 (`WireDates`), as the API and `audit export` write them.
func jsonText(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(WireDates.iso8601String(from: date))
    }
    return String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self)
}

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The keys that sign the tokens other services verify (published at /.well-known/jwks.json).",
        subcommands: [Rotate.self, List.self])

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make the next key: published now, signing after one access-token lifetime; the current one then retires.")
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let id = try await KeyCommands.rotate(configuration: loadConfiguration(), as: person)
            print("signing key \(id) published; it signs after one access-token lifetime")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the published keys: signing, next, retired.")
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let keys = try await KeyCommands.list(configuration: loadConfiguration())
            if json { return print(jsonText(keys)) }
            for key in keys {
                print("\(key.kid) \(key.state) signs from \(WireDates.iso8601String(from: key.signsFrom))"
                      + (key.publishedUntil.map { " published until \(WireDates.iso8601String(from: $0))" } ?? ""))
            }
        }
    }
}

struct OpenIDClients: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "oidc-clients",
        abstract: "The clients of the OpenID Connect provider: the team's web apps and tools that sign people in with Gatehouse.",
        subcommands: [Create.self, List.self, Disable.self, RotateSecret.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register a client; a confidential client's secret is printed once.")
        @Argument(help: "Its name, as the consent page shows it.") var name: String
        @Option(name: .customLong("redirect-uri"), help: "Where codes are sent, matched exactly (repeat for more).") var redirectURIs: [String] = []
        @Option(name: .customLong("post-logout-redirect-uri"), help: "Where a logout may return to (repeat for more).") var postLogout: [String] = []
        @Option(help: "What it may ask for: openid profile email phone offline_access, and a service's own scopes (repeat, or separate with commas).")
        var scope: [String] = ["openid"]
        @Flag(name: .customLong("public"), help: "A public client (a phone app, a page): no secret, PKCE only.") var isPublic = false
        @Flag(name: .customLong("first-party"), help: "The team's own: people are not asked for consent.") var firstParty = false
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let made = try await OpenIDClientCommands.create(configuration: loadConfiguration(), name: name, redirectURIs: redirectURIs,
                                                             postLogoutRedirectURIs: postLogout, confidential: !isPublic, scopes: scope,
                                                             firstParty: firstParty, as: person)
            if json { return print(jsonText(made)) }
            print("client \(made.clientID) (\(made.kind)\(made.firstParty ? ", first-party" : "")): \(made.name)")
            if let secret = made.clientSecret { print("client secret, shown once:\n  \(secret)") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the clients (never their secrets).")
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let all = try await OpenIDClientCommands.list(configuration: loadConfiguration())
            if json { return print(jsonText(all)) }
            for client in all {
                print("\(client.clientID) \(client.kind) \(client.name) [\(client.scopes.joined(separator: " "))] \(client.redirectURIs.joined(separator: " "))"
                      + (client.disabled ? " (disabled)" : ""))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a client for good.")
        @Argument(help: "Its client id.") var id: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let changed = try await OpenIDClientCommands.disable(configuration: loadConfiguration(), id: id, as: person)
            print(changed ? "client \(id) disabled" : "no enabled client \(id)")
            if !changed { throw ExitCode(1) }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rotate-secret", abstract: "A new secret for a confidential client; the old one stops at once.")
        @Argument(help: "Its client id.") var id: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            let secret = try await OpenIDClientCommands.rotateSecret(configuration: loadConfiguration(), id: id, as: person)
            print("client secret, shown once:\n  \(secret)")
        }
    }
}

struct Webhooks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The business's webhook endpoints: signed account events (Standard Webhooks), their deliveries and retries.",
        subcommands: [Create.self, List.self, Disable.self, RotateSecret.self, Deliveries.self, Retry.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an endpoint; its signing secret (whsec_…) is printed once.")
        @Argument(help: "Its URL: https, at a public address.") var url: String
        @Option(name: .customLong("event"), help: "An event type it hears (repeat for more; none: every type).") var events: [String] = []
        @Option(help: "What it is, for the list.") var description: String?
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?
        @Flag(help: "Print one JSON object.") var json = false

        func run() async throws {
            let made = try await WebhookCommands.create(configuration: loadConfiguration(), url: url, description: description, eventTypes: events, as: person)
            if json { return print(jsonText(made)) }
            print("endpoint \(made.id.uuidString.lowercased()) \(made.url) [\(made.eventTypes.isEmpty ? "every event" : made.eventTypes.joined(separator: " "))]")
            if let secret = made.secret { print("signing secret, shown once:\n  \(secret)") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the endpoints (never their secrets).")
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            let all = try await WebhookCommands.list(configuration: loadConfiguration())
            if json { return print(jsonText(all)) }
            for endpoint in all {
                print("\(endpoint.id.uuidString.lowercased()) \(endpoint.url) [\(endpoint.eventTypes.isEmpty ? "every event" : endpoint.eventTypes.joined(separator: " "))]"
                      + (endpoint.disabled ? " (disabled)" : ""))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an endpoint for good.")
        @Argument(help: "Its id.") var id: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not an endpoint id") }
            let changed = try await WebhookCommands.disable(configuration: loadConfiguration(), id: uuid, as: person)
            print(changed ? "endpoint \(id) disabled" : "no enabled endpoint \(id)")
            if !changed { throw ExitCode(1) }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rotate-secret",
                                                        abstract: "A new signing secret; the old one keeps signing beside it for GATEHOUSE_WEBHOOK_SECRET_OVERLAP_SECONDS.")
        @Argument(help: "Its id.") var id: String
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not an endpoint id") }
            let secret = try await WebhookCommands.rotateSecret(configuration: loadConfiguration(), id: uuid, as: person)
            print("signing secret, shown once:\n  \(secret)")
        }
    }

    struct Deliveries: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An endpoint's newest deliveries, or (--failed) those given up on.")
        @Argument(help: "The endpoint's id.") var id: String
        @Flag(help: "Only the deliveries given up on.") var failed = false
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not an endpoint id") }
            let all = try await WebhookCommands.deliveries(configuration: loadConfiguration(), id: uuid, failedOnly: failed)
            if json { return print(jsonText(all)) }
            for delivery in all {
                print("\(delivery.id.uuidString.lowercased()) \(WireDates.iso8601String(from: delivery.createdAt)) \(delivery.type) \(delivery.state) "
                      + "attempts \(delivery.attempts)" + (delivery.lastError.map { ": \($0)" } ?? ""))
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a delivery that was given up on again, from its first attempt.")
        @Argument(help: "The delivery's id.") var delivery: String
        @Option(help: "Why, for the audit trail.") var reason: String = "retried by hand"
        @Option(name: .customLong("as"), help: "Who is doing it, for the audit trail.") var person: String?

        func run() async throws {
            guard let uuid = UUID(uuidString: delivery) else { throw ValidationError("\(delivery) is not a delivery id") }
            let done = try await WebhookCommands.retry(configuration: loadConfiguration(), delivery: uuid, reason: reason, as: person)
            print(done ? "delivery \(delivery) queued again" : "no webhook delivery \(delivery) that was given up on")
            if !done { throw ExitCode(1) }
        }
    }
}
