import FluentKit
import GatehouseAccounts
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import GatehouseSignToLogin
import GatehouseWallet

/// Every migration, in order: the platform's and each app's (each app keeps its own beside its
/// code). Numbered; never edit one that has landed: add the next.
package enum GatehouseMigrations {
    package static var all: [any AsyncMigration] {
        [
            M001CreateAccounts(),
            M002CreateSessions(),
            M003CreateVerificationCodes(),
            M004CreateOutboxMessages(),
            M005CreateRateLimitCounters(),
            M006CreateAvatars(),
            M007NormalizeUsernameKeys(),
            M008CreateAvatarImages(),
            M009CreateMessenger(),
            M010CreateApps(),
            M011CreateSignatureModels(),
            M012CreateSignatureDocuments(),
            M013CreateWallet(),
            M014DropLedgerEntriesByTime(),
            M015SecureSignatureSurface(),
            M016CreateMessengerBlocks(),
            M017AccountDeletion(),
            M018SignatureFingerprints(),
            M019CreateAuditEvents(),
            M020CreateClientRecords(),
            M021AccountLocks(),
            M022CreateOperators(),
            M023CreatePushDevices(),
            M024CreateTopUps(),
            M025CreateSecondFactors(),
            M026CreatePasskeys(),
            M027CreateSignedTokens(),
            M028CreateOpenID(),
            M029AddExternalIDs(),
            M030AddLastSignIn(),
            M031OutboxOrdering(),
            M032CreateWebhookEndpoints(),
            M033CreateIdentities(),
            M034SigningThresholds(),
            M035CreatePushQueue(),
        ]
    }
}

