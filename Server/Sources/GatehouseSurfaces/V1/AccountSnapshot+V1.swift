import Foundation
import GatehouseAccounts
import GatehouseAPI

extension AccountSnapshot {
    /// The account as `/v1` shows it to its owner.
    package func v1Account(publicURL: String) -> Account {
        Account(
            id: id,
            email: email,
            emailConfirmed: email != nil && emailConfirmedAt != nil,
            pendingEmail: pendingEmail,
            phone: phone,
            phoneVerified: phone != nil && phoneVerifiedAt != nil,
            tag: username,
            firstName: firstName,
            lastName: lastName,
            middleName: middleName,
            birthday: birthday.map(WireDates.calendarDateString),
            locale: locale,
            avatarUrl: avatarID.map { publicURL + V1.Accounts.avatarImage.path(id: $0) },
            createdAt: createdAt,
            updatedAt: updatedAt
        )
    }
}
