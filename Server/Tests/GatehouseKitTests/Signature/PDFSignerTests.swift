import Foundation
import GatehouseSignature
import GatehouseTestSupport
import Testing

/// PDF signing by incremental update, checked by the real tools on a corpus made at test time
/// (Support/pdf_corpus.py: reportlab, qpdf, pypdf, Pillow; qpdf --check, pypdf, pdftoppm).
@Suite("Sign To Login: signing a PDF by incremental update")
struct PDFSignerTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/pdf_corpus.py").path

    /// A signature drawn through SignatureCapture (two strokes at 60 Hz), as the app would stamp it.
    static let ink: SignatureInk = {
        var capture = SignatureCapture(color: .blue)
        SignatureCaptureTests.write(&capture, speed: 500)
        return capture.ink(width: 340, height: 150)
    }()

    static func corpus(in folder: URL) async throws -> [String: String] {
        let (status, output) = try await runPythonScript(script, ["make", folder.path])
        try #require(status == 0, "\(output)")
        return try #require(JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String])
    }

    static func check(original: String, signed: Data, page: Int, rect: PDFRect, uri: String, in folder: URL) async throws -> String {
        let path = folder.appendingPathComponent("signed-\(UUID().uuidString).pdf")
        try signed.write(to: path)
        let (status, output) = try await runPythonScript(script, ["check", original, path.path, "\(page)", "\(rect.x)", "\(rect.y)",
                                                                  "\(rect.width)", "\(rect.height)", uri])
        #expect(status == 0, "\(output)")
        let report = try #require(JSONSerialization.jsonObject(with: Data((output.split(separator: "\n").last ?? "").utf8)) as? [String: Any])
        #expect(report["prefix"] as? Bool == true && report["qpdf"] as? Bool == true && report["link"] as? Bool == true, "\(output)")
        #expect((report["changed_inside"] as? Int ?? 0) >= 10 && report["changed_outside"] as? Int == 0, "\(output)")
        if let keep = ProcessInfo.processInfo.environment["PDF_SIGNER_KEEP"] {
            try? FileManager.default.copyItem(atPath: path.path, toPath: keep + "/" + path.lastPathComponent)
            print("PDF signer check \(page): \(output)")
        }
        return path.path
    }

    func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pdf-signer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("every kind of file (classic xref, LibreOffice's, object streams with an xref stream, an earlier incremental update, rotated and cropped pages) signs: qpdf checks it, pypdf sees the link, the pixels change only in the rectangle, the original is a prefix")
    func signsEveryKindOfFile() async throws {
        // setup
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let corpus = try await Self.corpus(in: folder)
        let cases: [(String, Int, PDFRect)] = [
            ("reportlab", 0, PDFRect(x: 320, y: 90, width: 200, height: 60)),
            ("reportlab", 1, PDFRect(x: 72, y: 400, width: 150, height: 45)),
            ("objstm", 1, PDFRect(x: 300, y: 120, width: 200, height: 60)),
            ("libreoffice", 0, PDFRect(x: 330, y: 80, width: 200, height: 60)),
            ("updated", 0, PDFRect(x: 100, y: 200, width: 200, height: 60)),
            ("rotated", 0, PDFRect(x: 400, y: 300, width: 60, height: 200)),
            ("rotated", 1, PDFRect(x: 300, y: 600, width: 200, height: 60)),
        ]
        for (name, page, rect) in cases {
            let original = try #require(corpus[name])
            let uri = "https://id.example.com/documents/?documentid=\(name)\(page)"

            // MUT
            let signed = try PDFSigner.sign(try Data(contentsOf: URL(fileURLWithPath: original)), page: page, rect: rect,
                                            stamp: SignatureStamp(ink: Self.ink, link: uri))

            // validate
            _ = try await Self.check(original: original, signed: signed, page: page, rect: rect, uri: uri, in: folder)
        }
    }

    @Test("a second signer signs the signed file: both versions are prefixes, both links are there, the photo is drawn")
    func secondSignerAndPhoto() async throws {
        // setup
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let corpus = try await Self.corpus(in: folder)
        let original = try #require(corpus["objstm"])
        let photo = try Data(contentsOf: URL(fileURLWithPath: try #require(corpus["photo"])))
        let first = PDFRect(x: 60, y: 100, width: 200, height: 60)
        let once = try PDFSigner.sign(try Data(contentsOf: URL(fileURLWithPath: original)), page: 0, rect: first,
                                      stamp: SignatureStamp(ink: Self.ink, link: "https://id.example.com/documents/?documentid=a"))
        let oncePath = try await Self.check(original: original, signed: once, page: 0, rect: first,
                                            uri: "https://id.example.com/documents/?documentid=a", in: folder)

        // MUT: the second signature, with a photo, beside the first
        let second = PDFRect(x: 300, y: 100, width: 260, height: 60)
        let twice = try PDFSigner.sign(once, page: 0, rect: second,
                                       stamp: SignatureStamp(ink: Self.ink, photoJPEG: photo, link: "https://id.example.com/documents/?documentid=b"))

        // validate
        #expect(twice.starts(with: once))
        _ = try await Self.check(original: oncePath, signed: twice, page: 0, rect: second,
                                 uri: "https://id.example.com/documents/?documentid=b", in: folder)
    }

    @Test("an encrypted PDF, a page that does not exist and bytes that are not a PDF are refused with a clear error; truncated and corrupted files never crash")
    func refusals() async throws {
        // setup
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let corpus = try await Self.corpus(in: folder)
        let stamp = SignatureStamp(ink: Self.ink, link: "https://id.example.com/documents/?documentid=x")
        let rect = PDFRect(x: 10, y: 10, width: 100, height: 30)
        let plain = try Data(contentsOf: URL(fileURLWithPath: try #require(corpus["reportlab"])))

        // MUT + validate
        #expect(throws: PDFError.encrypted) {
            try PDFSigner.sign(try Data(contentsOf: URL(fileURLWithPath: try #require(corpus["encrypted"]))), page: 0, rect: rect, stamp: stamp)
        }
        #expect(throws: PDFError.noSuchPage(5)) { try PDFSigner.sign(plain, page: 5, rect: rect, stamp: stamp) }
        #expect(throws: PDFError.self) { try PDFSigner.sign(Data("hello".utf8), page: 0, rect: rect, stamp: stamp) }
        // Every truncation of a real file either signs or is refused; none crashes.
        for length in stride(from: 0, to: plain.count, by: 97) {
            _ = try? PDFSigner.sign(plain.prefix(length), page: 0, rect: rect, stamp: stamp)
        }
        // Nor does any of 400 files with a few bytes changed (seeded), in each kind of file.
        var state: UInt64 = 42
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33)
        }
        for name in ["reportlab", "objstm", "libreoffice", "updated"] {
            let original = try Data(contentsOf: URL(fileURLWithPath: try #require(corpus[name])))
            for _ in 0..<100 {
                var bytes = [UInt8](original)
                for _ in 0..<(1 + next() % 4) { bytes[next() % bytes.count] = UInt8(next() % 256) }
                _ = try? PDFSigner.sign(Data(bytes), page: 0, rect: rect, stamp: stamp)
            }
        }
        #expect(PDFError.encrypted.description.contains("encrypted"))
    }
}
