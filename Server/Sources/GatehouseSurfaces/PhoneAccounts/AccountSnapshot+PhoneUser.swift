import GatehouseAccounts
import GatehouseAPI

extension AccountSnapshot {
    /// The account as `GET /api/users/user` shows it.
    package var phoneUser: PhoneUser {
        let login = username ?? phone ?? email ?? id.uuidString
        return PhoneUser(
            id: id,
            login: login,
            // The spec documents `name` as the login ("name (String): Логин").
            name: login,
            firstName: firstName,
            lastName: lastName,
            surName: middleName,
            phone: phone,
            email: displayedEmail,
            birthday: birthday.map(WireDates.phoneSpecString(from:)),
            room: nil,
            base: nil,
            isConfirmed: isEmailConfirmed,
            fcm: fcmToken,
            parts: []
        )
    }
}
