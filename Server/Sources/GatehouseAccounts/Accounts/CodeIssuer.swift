import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Sends the codes the account services ask for (sign-up, recovery, a new email or phone, Sign To
/// Login's enrolment): a random code, its keyed hash stored, the message queued, every sending
/// limit of `VerificationService` applied.
package struct CodeIssuer: Sendable {
    package let rules: AccountRules
    package let verification: VerificationService
    package let secrets: Secrets

    package init(rules: AccountRules, verification: VerificationService, secrets: Secrets) {
        self.rules = rules
        self.verification = verification
        self.secrets = secrets
    }

    /// Issues a numeric code for `purpose` to `destination`. `message` builds what is sent for
    /// the code: when it does not carry the code (a notice, or nil for nothing at all) the stored
    /// secret is a decoy nobody is told, so an unknown or taken address costs the same cooldowns
    /// and budgets as any other and no code for it can work.
    package func issueCode(_ purpose: VerificationPurpose, to destination: Destination, accountID: UUID?, origin: RequestOrigin,
                           message: (String) -> OutgoingMessage?) async throws -> CodeIssued {
        let code = secrets.numericCode(length: rules.limits.codeLength)
        let outgoing = message(code)
        let secretHash = outgoing?.code == code
            ? secrets.codeHash(code, purpose: purpose.rawValue, destination: destination.value)
            : Secrets.sha256Hex(secrets.token())
        let result = try await verification.issue(.init(
            purpose: purpose, destination: destination.value, accountID: accountID,
            secretHash: secretHash, ttl: rules.limits.codeTTL, message: outgoing, ip: origin.ip
        ))
        return rules.issued(destination, result)
    }
}
