import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import NIOCore
import SQLKit

/// Attachments: uploaded first (bytes into the `BlobStore`, a row naming them), then sent on
/// messages. An image is known by its magic bytes, never by what the client says; anything
/// else is a file, served as a download.
package struct AttachmentService: MessengerConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Messenger
    package let publicURL: String
    package let rateLimiter: RateLimiter
    package let blobs: any BlobStore
    package let people: PersonLoader
    package let reader: MessageReader
    package let store: MessengerStore
    /// Uploads never sent on a message are deleted after this long.
    package let unsentTTL: TimeInterval = 86_400

    /// What a download answers.
    /// An attachment to send: what it is, and its bytes streamed from the blob store a chunk at a
    /// time (`GATEHOUSE_MESSENGER_DOWNLOAD_CHUNK_BYTES`), so a slow reader of a large file holds a
    /// chunk, not the file.
    package struct Download: Sendable {
        package var attachment: Attachment
        package var blob: BlobKey
        package var size: Int
        package let store: any BlobStore
        package let chunkSize: Int

        /// Writes the bytes of `range` (all when nil) to `write`.
        package func write(_ range: ClosedRange<Int>?, to write: (ByteBuffer) async throws -> Void) async throws {
            try await store.stream(blob, range: range, chunkSize: chunkSize, to: write)
        }
    }

    package func upload(viewer: AccountSnapshot, contentType declared: String?, fileName: String?, bytes: Data) async throws -> Attachment {
        try requirePerson(viewer)
        guard !bytes.isEmpty else { throw GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", "", "body").on(field: "body") }
        guard bytes.count <= settings.attachmentMaxBytes else { throw GatehouseError.bodyTooLarge(settings.attachmentMaxBytes) }
        let media = Self.mediaType(declared)
        let kind: Attachment.Kind
        let contentType: String
        // An image is one walked to its end (as avatars are): "a PNG header, then HTML" is not one,
        // and is kept as a file (served as a download), or refused when it claims an image type.
        if let format = ImageFormat.allCases.first(where: { $0.matches(bytes) }), ImageStructure.isComplete(bytes, format: format) {
            guard media == nil || !media!.hasPrefix("image/") || media == format.rawValue || ImageFormat(rawValue: media!) == nil else {
                throw GatehouseError.invalid(.invalidImage, "error.invalidImage", media!)
            }
            kind = .image
            contentType = format.rawValue
        } else {
            if let media, ImageFormat(rawValue: media) != nil { throw GatehouseError.invalid(.invalidImage, "error.invalidImage", media) }
            kind = .file
            contentType = media ?? "application/octet-stream"
        }
        try await rateLimiter.hit("uploads", key: viewer.id.uuidString, limit: settings.uploadsPerHour, window: 3_600)
        let blob = try await blobs.put(bytes)
        let id = OrderedID.make()
        let name = Self.cleanFileName(fileName, kind: kind, contentType: contentType)
        try await store.insertAttachment(id: id, owner: viewer.id, blob: blob.hex, kind: kind.rawValue, contentType: contentType,
                                         fileName: name, size: bytes.count, now: clock.now())
        return Attachment(id: id, kind: kind, contentType: contentType, fileName: name, size: bytes.count,
                          url: publicURL + V1.Messenger.download.path(id: id))
    }

    /// An attachment its uploader, or a member who sees a message carrying it, may read; 404 otherwise.
    package func download(viewer: UUID, attachment id: UUID) async throws -> Download {
        guard let row = try await store.readableAttachment(id, viewer: viewer),
            let key = BlobKey(hex: try row.decode(column: "blob_key", as: String.self))
        else { throw GatehouseError.notFound(.attachmentNotFound, "error.attachmentNotFound") }
        let attachment = try reader.attachment(row)
        return Download(attachment: attachment, blob: key, size: attachment.size, store: blobs, chunkSize: settings.downloadChunkBytes)
    }

    /// Deletes uploads no message carries after `unsentTTL` (their blobs go with the collector).
    package func purgeUnsent() async throws {
        try await store.purgeUnsentAttachments(before: clock.now().addingTimeInterval(-unsentTTL))
    }

    /// `type/subtype` in lowercase, or nil when absent or not a media type.
    package static func mediaType(_ header: String?) -> String? {
        guard let raw = header?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased(), !raw.isEmpty else { return nil }
        let parts = raw.split(separator: "/", omittingEmptySubsequences: false)
        let token = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyz0123456789!#$&^_.+-")
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 64 && $0.unicodeScalars.allSatisfy(token.contains) }) else { return nil }
        return raw
    }

    /// A file name without folders or control characters, at most 255 characters; a default by kind.
    package static func cleanFileName(_ raw: String?, kind: Attachment.Kind, contentType: String) -> String {
        var name = (raw ?? "").replacingOccurrences(of: "\\", with: "/").split(separator: "/").last.map(String.init) ?? ""
        name = String(name.unicodeScalars.filter { $0.properties.generalCategory != .control && $0 != "\"" }.map(Character.init))
            .trimmingCharacters(in: .whitespaces)
        if name == "." || name == ".." { name = "" }
        if name.isEmpty {
            let ext = ImageFormat(rawValue: contentType).map { "." + $0.rawValue.dropFirst(6) } ?? ""
            name = (kind == .image ? "image" : "file") + ext
        }
        return String(name.prefix(255))
    }

    package init(clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, publicURL: String, rateLimiter: RateLimiter,
                 blobs: any BlobStore, people: PersonLoader, reader: MessageReader, store: MessengerStore) {
        self.clock = clock
        self.settings = settings
        self.publicURL = publicURL
        self.rateLimiter = rateLimiter
        self.blobs = blobs
        self.people = people
        self.reader = reader
        self.store = store
    }
}
