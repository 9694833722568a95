import Foundation

extension V1 {
    /// The Sign To Login profile (the spec's "Профайл"): made by `/register/`, read and edited by
    /// the person afterwards (here with their session, which `/register/`'s `sessionid` is, or on the
    /// site's profile page), and deleted with their signatures: a person's right.
    public enum Signatures {
        /// My profile (404 `signature_profile_not_found` before an enrolment).
        public static let profile = Endpoint<NoContent, SignatureProfile>(.get, "/v1/me/signature-profile")
            .operation("getSignatureProfile", "My Sign To Login profile", tags: "Sign To Login")
            .errors([404: [.signatureProfileNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Changes the optional fields sent; an empty string clears one. Each takes only its
        /// characters (`SignatureProfileRules`): 400 `invalid_parameter` naming the field otherwise.
        public static let updateProfile = Endpoint<SignatureProfileUpdate, SignatureProfile>(.patch, "/v1/me/signature-profile")
            .operation("updateSignatureProfile", "Edit my Sign To Login profile", tags: "Sign To Login")
            .errors([400: [.invalidParameter, .malformedBody], 404: [.signatureProfileNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Deletes my profile and my signatures: the models, the kept enrolment signatures, the
        /// attempts' points, photos and places. Documents I signed keep the fact of my signing
        /// (who, when, how close), as other people's records. The account stays.
        public static let deleteProfile = Endpoint<NoContent, NoContent>(.delete, "/v1/me/signature-profile", success: 204)
            .operation("deleteSignatureProfile", "Delete my profile and signatures", tags: "Sign To Login")
            .errors([404: [.signatureProfileNotFound]])
            .shared(.unauthorized, .unexpectedProblem)

        /// My profile's picture (404 `signature_profile_not_found` without one).
        public static let photo = Endpoint<NoContent, RawBody>(.get, "/v1/me/signature-profile/photo")
            .operation("getSignatureProfilePhoto", "My profile's picture", tags: "Sign To Login")
            .errors([404: [.signatureProfileNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Sets the picture: the bytes of a PNG, JPEG, GIF or WebP image.
        public static let setPhoto = Endpoint<RawBody, SignatureProfile>(.put, "/v1/me/signature-profile/photo")
            .operation("setSignatureProfilePhoto", "Set my profile's picture", tags: "Sign To Login")
            .errors([400: [.invalidImage], 404: [.signatureProfileNotFound], 413: []])
            .shared(.unauthorized, .unexpectedProblem)
        /// Removes the picture.
        public static let deletePhoto = Endpoint<NoContent, SignatureProfile>(.delete, "/v1/me/signature-profile/photo")
            .operation("deleteSignatureProfilePhoto", "Remove my profile's picture", tags: "Sign To Login")
            .errors([404: [.signatureProfileNotFound]])
            .shared(.unauthorized, .unexpectedProblem)

        /// Every operation above.
        public static let all: [any EndpointDeclaration] = [profile, updateProfile, deleteProfile, photo, setPhoto, deletePhoto]
    }
}

/// The person's Sign To Login profile.
public struct SignatureProfile: Codable, Sendable, Equatable {
    /// The email address.
    public var email: String
    /// The spec's `user_name`.
    public var userName: String
    /// The phone number, as the person gave it.
    public var phoneNumber: String?
    /// The company's name.
    public var companyName: String?
    /// The position in the company.
    public var position: String?
    /// `DD.MM.YYYY`.
    public var birthday: String?
    /// `male` or `female`.
    public var sex: String?
    /// Where the person enrolled, as the device told it (not editable).
    public var country: String?
    /// The city.
    public var city: String?
    /// The address.
    public var address: String?
    /// The picture (sent with the enrolment or set since): `GET` it with the session.
    public var photoUrl: String?
    /// The types of device the person has a sample from (`iphone`, `ipad`, `ipod`, `other`).
    public var devices: [String]
    /// When it last changed.
    public var updatedAt: Date

    /// Makes one of its members, each as its property describes.
    public init(email: String, userName: String, phoneNumber: String? = nil, companyName: String? = nil, position: String? = nil,
                birthday: String? = nil, sex: String? = nil, country: String? = nil, city: String? = nil, address: String? = nil,
                photoUrl: String? = nil, devices: [String] = [], updatedAt: Date) {
        self.email = email
        self.userName = userName
        self.phoneNumber = phoneNumber
        self.companyName = companyName
        self.position = position
        self.birthday = birthday
        self.sex = sex
        self.country = country
        self.city = city
        self.address = address
        self.photoUrl = photoUrl
        self.devices = devices
        self.updatedAt = updatedAt
    }
}

/// `PATCH /v1/me/signature-profile`: the optional fields to change (absent: unchanged; empty: cleared).
public struct SignatureProfileUpdate: Codable, Sendable, Equatable {
    /// The phone number.
    public var phoneNumber: String?
    /// The company's name.
    public var companyName: String?
    /// The position in the company.
    public var position: String?
    /// The birthday, `YYYY-MM-DD`.
    public var birthday: String?
    /// The sex, as the spec's profile has it.
    public var sex: String?

    /// Makes one of its members, each as its property describes.
    public init(phoneNumber: String? = nil, companyName: String? = nil, position: String? = nil, birthday: String? = nil, sex: String? = nil) {
        self.phoneNumber = phoneNumber
        self.companyName = companyName
        self.position = position
        self.birthday = birthday
        self.sex = sex
    }
}
