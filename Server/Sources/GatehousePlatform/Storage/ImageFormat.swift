import Foundation

/// The image types the server stores (avatars; attachments and photos next), with the bytes each
/// format starts with; `ImageStructure` walks a file of one to its end.
package enum ImageFormat: String, CaseIterable, Sendable {
    case png = "image/png"
    case jpeg = "image/jpeg"
    case gif = "image/gif"
    case webp = "image/webp"

    package static var allowedList: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Whether `bytes` really are this format (its magic number), whatever the client says.
    package func matches(_ bytes: Data) -> Bool {
        let b = [UInt8](bytes.prefix(12))
        switch self {
        case .png: return b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case .jpeg: return b.starts(with: [0xFF, 0xD8, 0xFF])
        case .gif: return b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8))
        case .webp: return b.count == 12 && b.starts(with: Array("RIFF".utf8)) && Array(b[8..<12]) == Array("WEBP".utf8)
        }
    }
}
