import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehousePlatform

/// The registry of signed documents (the spec's `/savedocument/` and `/opendocument/`): a
/// document is a chain of versions, each known by the hash the app computed of the saved PDF;
/// a save names the hash it started from, and extends the chain whose newest version has it.
package struct SignatureDocuments: Sendable {
    package let database: DatabaseProvider
    /// Its tables.
    package let records: SignToLoginStore
    package let clock: GatehouseClock
    /// Below this similarity a signing shows a warning (`GATEHOUSE_SIGNATURE_WARN_BELOW`), as it
    /// does below the threshold of the app it was signed through.
    package let warnBelow: Double
    /// The least similarity that signs (`GATEHOUSE_SIGNATURE_SIGN_FLOOR`).
    package let signFloor: Double
    /// Where the server is reached: a signing's photo address starts with it.
    package let publicURL: String
    package let sessions: SessionService
    package let blobs: any BlobStore
    package let signatures: SignatureService


    package enum Saved: Equatable, Sendable {
        case saved(documentID: String)
        /// No `sessionid` of the person the email names (missing, ended, or someone else's).
        case sessionRefused
        /// A signature id that is not an unused attempt of the caller's through this app at or above the signing floor.
        case foreignSignature(String)
        /// `previous_hash` is an older version of a document another save has already extended.
        case conflict
    }

    /// Why a save's transaction stops (everything it did is rolled back).
    private struct Refusal: Error { let answer: Saved }

    package struct Save: Sendable {
        package var email: String
        /// The `sessionid` the app holds: the save is the person's only with one of their sessions.
        package var sessionToken: String?
        package var previousHash: String?
        package var documentHash: String
        package var signatureIDs: [String]
        /// The document the app opened (read from the PDF's link), if it knows it.
        package var documentID: String?
        package var appID: UUID
        /// The app's acceptance threshold: a signing below it is kept with a warning.
        package var threshold: Double
    
        package init(email: String, sessionToken: String? = nil, previousHash: String? = nil, documentHash: String, signatureIDs: [String], documentID: String? = nil, appID: UUID, threshold: Double) {
            self.email = email
            self.sessionToken = sessionToken
            self.previousHash = previousHash
            self.documentHash = documentHash
            self.signatureIDs = signatureIDs
            self.documentID = documentID
            self.appID = appID
            self.threshold = threshold
        }
}

    /// Records a saved version, as the person the email names (their session) with their own
    /// signatures: attempts made through this app at or above the signing floor, each used once
    /// (the save spends them in its transaction, keeping the app's threshold with each: one below
    /// it is a low-match signing every later reader is warned of; docs/security.md, "Low-match signings").
    ///
    /// With a `previous_hash` that is a document's newest version, the chain grows by one
    /// (compare-and-set on the newest hash, so two saves from the same version make one chain and
    /// the second is `conflict`) when the saver may extend it: they have saved a version of it,
    /// or they name it by `documentid` (they opened the signed PDF, which carries it). Anyone else
    /// holding a file with that hash starts a fork: a new document that records which one it
    /// forked from, so a stranger who registered a hash first never becomes an earlier signer of
    /// the owner's document. With an unknown or empty `previous_hash`, a new document.
    package func save(_ r: Save) async throws -> Saved {
        guard let token = r.sessionToken, let session = try await sessions.authenticate(token: token),
              let account = try await signatures.account(email: r.email), session.account.id == account.id else { return .sessionRefused }
        let accountID = account.id!
        let now = clock.now()
        do {
            return try await database.db.withTransaction { tx in
                for id in r.signatureIDs {
                    let spent = try await records.spendAttempt(id: id, accountID: accountID, appID: r.appID, floor: min(signFloor, r.threshold),
                                                               threshold: r.threshold, now: now, on: tx)
                    if !spent { throw Refusal(answer: .foreignSignature(id)) }
                }
                var documentID: String?
                var forkedFrom: String?
                var seq = 1
                if let previousHash = r.previousHash, !previousHash.isEmpty {
                    switch try await chain(extendedFrom: previousHash, by: accountID, named: r.documentID, on: tx) {
                    case .extend(let current):
                        // Compare and set: only a save from the newest version extends the chain.
                        guard let versions = try await records.extend(documentID: current, from: previousHash, to: r.documentHash, now: now, on: tx)
                        else { throw Refusal(answer: .conflict) }
                        documentID = current
                        seq = versions
                    case .older:
                        throw Refusal(answer: .conflict)
                    case .fork(let other):
                        forkedFrom = other
                    case .none:
                        break
                    }
                }
                if documentID == nil {
                    let id = SignatureService.randomHex(bytes: 10)
                    try await records.insertDocument(id: id, hash: r.documentHash, forkedFrom: forkedFrom, now: now, on: tx)
                    documentID = id
                }
                try await records.insertVersion(documentID: documentID!, seq: seq, hash: r.documentHash, accountID: accountID, appID: r.appID,
                                                signatureIDs: r.signatureIDs, now: now, on: tx)
                return .saved(documentID: documentID!)
            }
        } catch let refusal as Refusal {
            return refusal.answer
        }
    }

    /// What a save from `previousHash` does to the chains that hold it.
    private enum ChainStep {
        /// Extends this document (its newest hash is `previousHash`).
        case extend(String)
        /// `previousHash` is an older version of a document the saver may extend.
        case older
        /// The saver may not extend the document that holds it: a new one, forked from it.
        case fork(String)
        /// No document holds it: a new one.
        case none
    }

    private func chain(extendedFrom previousHash: String, by accountID: UUID, named documentID: String?, on tx: any GatehouseDatabase) async throws -> ChainStep {
        var foreign: String?
        for holder in try await records.holders(ofHash: previousHash, accountID: accountID, on: tx) {
            let mayExtend = holder.savedByAccount || holder.id == documentID?.lowercased()
            guard mayExtend else { foreign = foreign ?? holder.id; continue }
            return holder.latestHash == previousHash ? .extend(holder.id) : .older
        }
        return foreign.map(ChainStep.fork) ?? .none
    }

    /// One signing in a document's history.
    package struct Entry: Equatable, Sendable {
        package var signer: String
        package var similarity: Double
        /// Below `GATEHOUSE_SIGNATURE_WARN_BELOW` or the signing app's threshold at the save: a low
        /// match the history shows a warning for.
        package var lowMatch: Bool
        package var signedAt: Date
        package var clientTime: String?
        package var location: String?
        package var country: String?
        package var city: String?
        package var address: String?
        package var photoURL: String?
        package var signatureID: String
        /// The document's hash after the save that added this signature.
        package var documentHash: String
    }

    package enum Opened: Equatable, Sendable {
        /// The hash is the newest version's.
        case current([Entry])
        /// The document was changed after its last save through the app.
        case changed([Entry])
        case notFound
        /// The email names nobody with a Sign To Login enrolment (answered alike for every such address).
        case unknownUser
    }

    /// A document's history as `email`'s app opens it: a lookup of the address first (budgeted,
    /// `SignatureService.lookUp`), then the document by its id and whether `documentHash` is its newest.
    package func open(email: String, documentID: String, documentHash: String, appID: UUID, origin: RequestOrigin) async throws -> Opened {
        guard try await signatures.lookUp(email: email, appID: appID, origin: origin) != nil else { return .unknownUser }
        guard documentID.count <= 64, documentID.allSatisfy(\.isHexDigit),
              let latest = try await records.latestHash(documentID: documentID.lowercased()) else { return .notFound }
        let history = try await history(documentID: documentID.lowercased())
        return latest == documentHash ? .current(history) : .changed(history)
    }

    package func exists(documentID: String) async throws -> Bool {
        try await records.documentExists(id: documentID)
    }

    /// What a document's history names a signer whose account was deleted.
    package static let deletedSigner = "Deleted account"

    package func history(documentID: String) async throws -> [Entry] {
        return try await records.signings(documentID: documentID).map { signing in
            let names = [signing.firstName, signing.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
            return Entry(
                signer: signing.signerErased ? Self.deletedSigner : names.isEmpty ? (signing.email ?? "") : names,
                similarity: signing.similarity, lowMatch: signing.similarity < max(warnBelow, signing.signedThreshold ?? 0), signedAt: signing.signedAt,
                clientTime: signing.clientTime, location: signing.location, country: signing.country, city: signing.city,
                address: signing.address,
                photoURL: signing.photoBlobKey != nil ? publicURL + "/signature-photos/" + signing.signatureID : nil,
                signatureID: signing.signatureID, documentHash: signing.documentHash)
        }
    }

    /// An attempt's photo (public by its unguessable id, as the history that names it).
    package func photo(signatureID: String) async throws -> Data? {
        guard signatureID.count <= 64, signatureID.allSatisfy(\.isHexDigit),
              let hex = try await records.photoBlobKey(attemptID: signatureID),
              let key = BlobKey(hex: hex) else { return nil }
        return try await blobs.get(key)
    }

    package init(database: DatabaseProvider, records: SignToLoginStore, clock: GatehouseClock, warnBelow: Double, signFloor: Double, publicURL: String,
                 sessions: SessionService, blobs: any BlobStore, signatures: SignatureService) {
        self.database = database
        self.records = records
        self.clock = clock
        self.warnBelow = warnBelow
        self.signFloor = signFloor
        self.publicURL = publicURL
        self.sessions = sessions
        self.blobs = blobs
        self.signatures = signatures
    }
}
