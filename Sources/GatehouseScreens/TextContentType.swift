import Foundation

/// How a text field should present itself; `oneTimeCode` maps to UIKit's
/// `UITextContentType.oneTimeCode`, which lets iOS offer the SMS code above the keyboard.
public enum TextContentType: String, Equatable, Sendable {
    /// A code from an SMS or mail (autofill).
    case oneTimeCode
    /// A phone number.
    case telephoneNumber
    /// An email address.
    case emailAddress
    /// The current password.
    case password
    /// A new password (the keychain may suggest one).
    case newPassword
    /// A login.
    case username
    /// A person's name.
    case name
}
