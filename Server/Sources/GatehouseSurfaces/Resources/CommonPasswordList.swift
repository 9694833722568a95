import Foundation
import GatehouseAccounts

extension CommonPasswords {
    /// The common-passwords list shipped in this target's resources (`common-passwords.txt.gz`: 20,000 passwords,
    /// lower-cased; its origin and licence are in the repository's NOTICE and docs/security.md). Read and decompressed
    /// once per process, on first use.
    package static func shipped() throws -> CommonPasswords { try shippedList.get() }

    private static let shippedList = Result<CommonPasswords, any Error> {
        guard let url = Bundle.module.url(forResource: "common-passwords.txt", withExtension: "gz") else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "common-passwords.txt.gz"])
        }
        return try CommonPasswords(gzip: Data(contentsOf: url))
    }
}
