import GatehouseAccounts
import GatehouseAPI

extension AccountSnapshot {
    /// The account as `GET /api/users/user` shows it: `room`, `base` and `parts` from the client
    /// record bound to it, when there is one.
    package func phoneUser(client: ClientRecord?) -> PhoneUser {
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
            room: client?.room,
            base: client?.base,
            isConfirmed: isEmailConfirmed,
            fcm: fcmToken,
            parts: client?.parts ?? []
        )
    }
}
