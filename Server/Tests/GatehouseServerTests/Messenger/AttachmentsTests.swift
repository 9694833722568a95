import Foundation
import GatehouseAPI
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Attachments at the wire level: uploads (raw and multipart), sniffing, downloads with ETag
/// and Range, limits (docs/messenger.md).
@Suite("Messenger: attachments")
struct AttachmentsTests {
    typealias M = V1.Messenger

    @Test("an image is known by its bytes; a file is a download; both come back byte for byte with the right headers", arguments: TestEngine.once)
    func upload_andDownload(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")

            // MUT
            let image = try await app.v1.upload(SampleFiles.png, type: "application/octet-stream", name: "../../photo.png", by: ann)
            let file = try await app.v1.upload(SampleFiles.pdf, type: "application/pdf", name: "Отчёт \"Q3\".pdf", by: ann)
            let html = try await app.v1.upload(Array("<script>alert(1)</script>".utf8), type: "text/html", by: ann)

            // validate
            #expect(image.kind == .image && image.contentType == "image/png" && image.fileName == "photo.png" && image.size == SampleFiles.png.count)
            #expect(file.kind == .file && file.contentType == "application/pdf" && file.fileName == "Отчёт Q3.pdf")
            #expect(image.url == app.configuration.publicURL + app.v1.path(M.download, image.id))
            let png = try await app.v1.get(app.v1.path(M.download, image.id), token: ann.token)
            #expect(png.status == .ok && Array(png.body.readableBytesView) == SampleFiles.png)
            #expect(png.headers[.contentType] == "image/png")
            #expect(png.headers[.contentDisposition]?.hasPrefix("inline;") == true)
            #expect(png.headers[.init("X-Content-Type-Options")!] == "nosniff")
            let pdf = try await app.v1.get(app.v1.path(M.download, file.id), token: ann.token)
            #expect(pdf.headers[.contentType] == "application/pdf")
            #expect(pdf.headers[.contentDisposition] == "attachment; filename=\"_____ Q3.pdf\"; filename*=UTF-8''%D0%9E%D1%82%D1%87%D1%91%D1%82%20Q3.pdf")
            let page = try await app.v1.get(app.v1.path(M.download, html.id), token: ann.token)
            #expect(page.headers[.contentDisposition]?.hasPrefix("attachment;") == true, "never rendered inline")
            #expect(page.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
        }
    }

    @Test("an image header followed by something else is not an image: a download when untyped, refused when it claims an image type", arguments: TestEngine.once)
    func upload_imageHeaderThenHTML_isNotAnImage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let pngThenHTML = Array(SampleFiles.png.prefix(16)) + Array("<html><script>alert(1)</script></html>".utf8)
            let gifThenSVG = Array("GIF89a".utf8) + Array("<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"/>".utf8)
            let pngThenMore = SampleFiles.png + Array("<html>".utf8)

            // MUT
            let untyped = try await app.v1.upload(pngThenHTML, type: nil, by: ann)
            let claimed = try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: pngThenHTML), contentType: "image/png", token: ann.token)
            let gif = try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: gifThenSVG), contentType: "image/gif", token: ann.token)
            let trailing = try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: pngThenMore), contentType: "image/png", token: ann.token)

            // validate
            #expect(untyped.kind == .file && untyped.contentType == "application/octet-stream", "\(untyped)")
            let served = try await app.v1.get(app.v1.path(M.download, untyped.id), token: ann.token)
            #expect(served.headers[.contentType] == "application/octet-stream" && served.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
            for refused in [claimed, gif, trailing] {
                #expect(refused.status == .badRequest && refused.text.contains("invalid_image"), "\(refused.status) \(refused.text)")
            }
        }
    }

    @Test("a download streams from the blob store chunk by chunk: whole and ranged bytes arrive intact; a blob changed on disk is cut short, never served whole", arguments: TestEngine.once)
    func download_streamsInChunks(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.downloadChunkBytes = 1_024 }) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let file = try await app.v1.upload(bytes, type: "application/octet-stream", by: ann)
            let path = app.v1.path(M.download, file.id)

            // MUT
            let whole = try await app.v1.get(path, token: ann.token)
            let part = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=50000-52047"])
            let store = try FileBlobStore(root: URL(fileURLWithPath: app.configuration.blobDirectory))
            var tampered = bytes
            tampered[99_000] ^= 0xFF
            try Data(tampered).write(to: store.path(BlobKey(of: Data(bytes))))
            let cut = try? await app.v1.get(path, token: ann.token)

            // validate
            #expect(whole.status == .ok && Array(whole.body.readableBytesView) == bytes && whole.headers[.contentLength] == "100000")
            #expect(part.status == .partialContent && Array(part.body.readableBytesView) == Array(bytes[50_000...52_047]))
            #expect(cut.map { $0.body.readableBytes < bytes.count } ?? true, "the corrupt blob's answer is cut (or the connection dropped)")
            #expect(cut.map { Array($0.body.readableBytesView) != tampered } ?? true)
        }
    }

    @Test("ETag and If-None-Match answer 304; Range answers 206 with Content-Range; a range past the end is 416", arguments: TestEngine.once)
    func download_etagAndRange(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bytes = SampleFiles.text(1_000)
            let file = try await app.v1.upload(bytes, type: "text/plain", name: "notes.txt", by: ann)
            let path = app.v1.path(M.download, file.id)

            // MUT
            let full = try await app.v1.get(path, token: ann.token)
            let etag = try #require(full.headers[.eTag])
            let cached = try await app.v1.get(path, token: ann.token, headers: [.ifNoneMatch: etag])
            let middle = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=10-19"])
            let tail = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=-5"])
            let open = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=995-"])
            let past = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=5000-6000"])
            let stale = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=0-1", .ifRange: "\"other\""])
            let huge = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=0-99999999999999999999"])
            let hugeSuffix = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=-99999999999999999999"])
            let hugeStart = try await app.v1.get(path, token: ann.token, headers: [.range: "bytes=99999999999999999999-"])

            // validate
            #expect(full.headers[.acceptRanges] == "bytes")
            #expect(cached.status == .notModified && cached.body.readableBytes == 0)
            #expect(middle.status == .partialContent && Array(middle.body.readableBytesView) == Array(bytes[10...19]))
            #expect(middle.headers[.contentRange] == "bytes 10-19/1000")
            #expect(tail.status == .partialContent && Array(tail.body.readableBytesView) == Array(bytes[995...]))
            #expect(open.headers[.contentRange] == "bytes 995-999/1000")
            #expect(past.status == .rangeNotSatisfiable && past.headers[.contentRange] == "bytes */1000")
            #expect(stale.status == .ok && stale.body.readableBytes == 1_000, "If-Range with another ETag: the whole file")
            // RFC 9110: a last position past the end, however many digits, is clamped to the file's size
            #expect(huge.status == .partialContent && huge.headers[.contentRange] == "bytes 0-999/1000" && huge.body.readableBytes == 1_000)
            #expect(hugeSuffix.status == .partialContent && hugeSuffix.headers[.contentRange] == "bytes 0-999/1000")
            #expect(hugeStart.status == .rangeNotSatisfiable && hugeStart.headers[.contentRange] == "bytes */1000")
        }
    }

    @Test("multipart upload: the part named file with its name and type", arguments: TestEngine.once)
    func upload_multipart(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let boundary = "gh-boundary-1"
            var body = ByteBuffer(string: "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n")
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"dot.png\"\r\nContent-Type: image/png\r\n\r\n")
            body.writeBytes(SampleFiles.png)
            body.writeString("\r\n--\(boundary)--\r\n")

            // MUT
            let response = try await app.v1.post(M.upload.path, body: body, contentType: "multipart/form-data; boundary=\(boundary)", token: ann.token)

            // validate
            #expect(response.status == .created, "\(response.text)")
            let attachment = try response.decoded(as: GatehouseAPI.Attachment.self)
            #expect(attachment.kind == .image && attachment.fileName == "dot.png" && attachment.size == SampleFiles.png.count)
            let noFile = try await app.v1.post(M.upload.path, body: Wire.multipartBody([("x", "y")], boundary: boundary),
                                               contentType: "multipart/form-data; boundary=\(boundary)", token: ann.token)
            try expectProblem(noFile, .badRequest, .malformedBody)
        }
    }

    @Test("limits: too large is 413, empty is 400, a lying image type is 400, uploads per hour are 429", arguments: TestEngine.once)
    func upload_limits(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.messenger.attachmentMaxBytes = 2_048; $0.messenger.uploadsPerHour = 2 }) { app in
            let ann = try await app.v1.person("ann")
            try expectProblem(try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: SampleFiles.text(2_049)), contentType: "text/plain", token: ann.token),
                              .contentTooLarge, .bodyTooLarge)
            try expectProblem(try await app.v1.post(M.upload.path, body: ByteBuffer(), contentType: "text/plain", token: ann.token), .badRequest, .invalidParameter)
            try expectProblem(try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: SampleFiles.pdf), contentType: "image/jpeg", token: ann.token),
                              .badRequest, .invalidImage)
            try expectProblem(try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: SampleFiles.png), contentType: "image/jpeg", token: ann.token),
                              .badRequest, .invalidImage)
            try expectProblem(try await app.v1.get(app.v1.path(M.download, UUID()), token: ann.token), .notFound, .attachmentNotFound)
            // Refused uploads took no slot: two go through, the third is refused.
            _ = try await app.v1.upload(SampleFiles.text(10), type: "text/plain", by: ann)
            _ = try await app.v1.upload(SampleFiles.text(11), type: "text/plain", by: ann)
            let third = try await app.v1.post(M.upload.path, body: ByteBuffer(bytes: SampleFiles.text(12)), contentType: "text/plain", token: ann.token)
            try expectProblem(third, .tooManyRequests, .rateLimited)
            #expect(third.headers[.retryAfter] != nil)
        }
    }

    @Test("a chat's attachments, newest first, in pages; a deleted message's go; the blob stays while any row names it", .tags(.engine), arguments: TestEngine.all)
    func chatAttachments_andCollector(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.person("ann")
            let bob = try await app.v1.person("bob")
            let chat = try await app.v1.openChat(ann, with: bob)
            let one = try await app.v1.upload(SampleFiles.png, type: "image/png", by: ann)
            let two = try await app.v1.upload(SampleFiles.pdf, type: "application/pdf", by: ann)
            let three = try await app.v1.upload(SampleFiles.text(10), type: "text/plain", by: bob)
            let first = try await app.v1.send("", in: chat.id, by: ann, attachments: [one.id, two.id])
            try await app.v1.send("see", in: chat.id, by: bob, attachments: [three.id])

            // MUT
            let page1 = try await app.v1.get(app.v1.path(M.chatAttachments, chat.id) + "?limit=2", token: bob.token).decoded(as: ChatAttachmentPage.self)
            let page2 = try await app.v1.get(app.v1.path(M.chatAttachments, chat.id) + "?limit=2&cursor=\(try #require(page1.nextCursor))", token: bob.token)
                .decoded(as: ChatAttachmentPage.self)

            // validate
            #expect((page1.items + page2.items).map(\.attachment.id) == [three.id, two.id, one.id] && page2.nextCursor == nil)
            #expect(page2.items.last?.messageId == first.id && page2.items.last?.authorId == ann.id)
            #expect(try await app.v1.delete(app.v1.path(M.deleteMessage, first.id) + "?for=everyone", token: ann.token).status == .noContent)
            let after = try await app.v1.get(app.v1.path(M.chatAttachments, chat.id), token: bob.token).decoded(as: ChatAttachmentPage.self)
            #expect(after.items.map(\.attachment.id) == [three.id])
            // Unsent uploads are purged after a day; the collector then frees blobs no row names.
            app.clock.advance(by: 2 * 86_400)
            try await app.services.messenger.attachments.purgeUnsent()
            let deleted = try await app.services.blobCollector.collect(now: Date().addingTimeInterval(2 * 86_400))
            #expect(deleted == 2, "the PNG and the PDF of the deleted message")
            #expect(try await app.services.blobs.get(BlobKey(of: Data(SampleFiles.text(10)))) != nil, "Bob's file is still on a message")
        }
    }
}
