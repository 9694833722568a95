import Foundation
import GatehouseFoundation

/// What follows from accounts made together in one statement (an import's batch), written in the same transaction. A
/// save of one account is seen by the model middleware that keeps other tables in step with `accounts` (the
/// messenger's people index); a batch is written without the model, so the same keepers are told here.
package protocol AccountUpkeep: Sendable {
    func created(_ accounts: [AccountModel], on tx: any GatehouseDatabase) async throws
}
