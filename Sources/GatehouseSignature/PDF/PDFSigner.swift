import Foundation

/// A drawn signature as vector outlines: filled polygons in a box of `width` × `height` points,
/// origin top left (as UIKit draws them). `SignatureCapture` makes one; `UIBezierPath` and the
/// PDF writer draw the same polygons.
public struct SignatureInk: Equatable, Sendable, Codable {
    /// A point of an outline, in the ink's box (points, origin top left).
    public struct Point: Equatable, Sendable, Codable {
        /// Points from the left.
        public var x: Double
        /// Points from the top.
        public var y: Double
        /// A point at `x`, `y`.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// The box's width, in points.
    public var width: Double
    /// The box's height, in points.
    public var height: Double
    /// The outlines to fill, each a closed polygon.
    public var polygons: [[Point]]
    /// The pen's colour, red, green and blue in 0…1.
    public var color: PenColor

    /// Ink of `polygons` in a `width` × `height` box, drawn in `color`.
    public init(width: Double, height: Double, polygons: [[Point]], color: PenColor) {
        self.width = width
        self.height = height
        self.polygons = polygons
        self.color = color
    }

    /// Whether the ink covers a point (inside any polygon, by the even-odd test of each): what a
    /// surface without vector drawing fills, such as the terminal demo's character grid.
    public func covers(x: Double, y: Double) -> Bool {
        polygons.contains { polygon in
            var inside = false
            var j = polygon.count - 1
            for i in polygon.indices {
                let a = polygon[i], b = polygon[j]
                if (a.y > y) != (b.y > y), x < (b.x - a.x) * (y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                j = i
            }
            return inside
        }
    }
}

/// The spec's two pen colours.
public enum PenColor: String, Equatable, Sendable, Codable, CaseIterable {
    /// Blue ink, the default.
    case blue
    /// Black ink.
    case black

    /// The colour's red, green and blue, each 0…1 (what a PDF content stream's `rg` takes).
    public var rgb: (red: Double, green: Double, blue: Double) {
        switch self {
        case .blue: (0.05, 0.2, 0.75)
        case .black: (0, 0, 0)
        }
    }
}

/// What is put on the page: the signature, optionally the signer's photo to its right (a square
/// as high as the signature), and a link to the document's history page over both.
public struct SignatureStamp: Equatable, Sendable {
    /// The signature.
    public var ink: SignatureInk
    /// The signer's photo as JPEG bytes (embedded as they are, `DCTDecode`), drawn in a square to the
    /// signature's right; nil for none.
    public var photoJPEG: Data?
    /// Where the stamp links to: the document's history page.
    public var link: String

    /// A stamp of `ink`, with a photo when given, linking to `link`.
    public init(ink: SignatureInk, photoJPEG: Data? = nil, link: String) {
        self.ink = ink
        self.photoJPEG = photoJPEG
        self.link = link
    }

    /// The stamp's size as the reader sees it (before the page's rotation): the signature's box,
    /// widened by the photo's square when there is one.
    public var width: Double { ink.width + (photoJPEG == nil ? 0 : ink.height) }
    /// The stamp's height: the signature's.
    public var height: Double { ink.height }
}

/// Signs a PDF by an incremental update (ISO 32000-1, 7.5.6): the original bytes stay as they are
/// and a new section after them adds, on one page, a Form XObject with the signature (and an image
/// XObject with the photo), a content stream that draws it in a rectangle, and a Link annotation
/// to the history page. Each earlier version of the file is therefore a prefix of the result.
public enum PDFSigner {
    /// Signs `pdf`: the stamp on a page, appended as an incremental update; the signed file.
    ///
    /// - Parameters:
    ///   - pdf: the document as it is now (possibly already signed).
    ///   - page: the page's index, from 0.
    ///   - rect: where the stamp goes, in the page's user space (points, origin bottom left, the
    ///     page unrotated); the stamp is drawn upright as the page is shown (its /Rotate honoured).
    public static func sign(_ pdf: Data, page: Int, rect: PDFRect, stamp: SignatureStamp) throws -> Data {
        let document = try PDFDocument(data: pdf)
        let pages = try document.pages()
        guard pages.indices.contains(page) else { throw PDFError.noSuchPage(page) }
        guard rect.width > 0, rect.height > 0, stamp.width > 0, stamp.height > 0 else { throw PDFError.malformed("empty rectangle") }
        let target = pages[page]
        var next = document.size
        func allocate() -> PDFReference {
            defer { next += 1 }
            return PDFReference(next)
        }
        var objects: [(PDFReference, PDFObject)] = []

        // The photo, as the JPEG it is.
        var photo: PDFReference?
        if let jpeg = stamp.photoJPEG {
            let info = try JPEGInfo(jpeg)
            let reference = allocate()
            var image = PDFDictionary([("Type", .name("XObject")), ("Subtype", .name("Image")), ("Width", .int(info.width)),
                                       ("Height", .int(info.height)), ("BitsPerComponent", .int(8)), ("Filter", .name("DCTDecode"))])
            image["ColorSpace"] = .name(info.components == 1 ? "DeviceGray" : info.components == 4 ? "DeviceCMYK" : "DeviceRGB")
            if info.components == 4, info.adobeInverted { image["Decode"] = .array((0..<4).flatMap { _ in [PDFObject.int(1), .int(0)] }) }
            objects.append((reference, .stream(image, jpeg)))
            photo = reference
        }

        // The Form XObject: the ink, and the photo aspect-fit in its square.
        let form = allocate()
        var drawing = formContent(stamp.ink)
        var formResources = PDFDictionary()
        if let photo, let jpeg = stamp.photoJPEG {
            let info = try JPEGInfo(jpeg)
            let side = stamp.ink.height
            let scale = min(side / Double(info.width), side / Double(info.height))
            let w = Double(info.width) * scale, h = Double(info.height) * scale
            let x = stamp.ink.width + (side - w) / 2, y = (side - h) / 2
            drawing += "q \(f(w)) 0 0 \(f(h)) \(f(x)) \(f(y)) cm /Photo Do Q\n"
            formResources["XObject"] = .dictionary(PDFDictionary([("Photo", .reference(photo))]))
        }
        let formStream = try PDFFilters.deflate(Data(drawing.utf8))
        let formDictionary = PDFDictionary([("Type", .name("XObject")), ("Subtype", .name("Form")), ("FormType", .int(1)),
                                            ("BBox", .array([.int(0), .int(0), .real(stamp.width), .real(stamp.height)])),
                                            ("Resources", .dictionary(formResources)), ("Filter", .name("FlateDecode"))])
        objects.append((form, .stream(formDictionary, formStream)))

        // The page's resources with the form under a name of its own.
        var resources = target.resources
        var xobjects = try document.resolve(resources["XObject"])?.dictionary ?? PDFDictionary()
        var index = 1
        while xobjects["GHSignature\(index)"] != nil { index += 1 }
        let formName = "GHSignature\(index)"
        xobjects[formName] = .reference(form)
        resources["XObject"] = .dictionary(xobjects)

        // Contents: the page's own inside q … Q (whatever state they leave), then the stamp.
        let matrix = placement(of: stamp, in: rect, rotation: target.rotation)
        let opening = allocate(), closing = allocate()
        objects.append((opening, .stream(PDFDictionary(), Data("q\n".utf8))))
        let stampDrawing = "\nQ\nq \(matrix.map(f).joined(separator: " ")) cm /\(formName) Do Q\n"
        objects.append((closing, .stream(PDFDictionary(), Data(stampDrawing.utf8))))
        var contents: [PDFObject] = [.reference(opening)]
        switch target.dictionary["Contents"] {
        case .reference(let reference)?:
            if case .array(let items) = try document.object(reference) { contents += items } else { contents.append(.reference(reference)) }
        case .array(let items)?: contents += items
        default: break
        }
        contents.append(.reference(closing))

        // The link to the history page over the stamp.
        let annotation = allocate()
        let link = PDFDictionary([("Type", .name("Annot")), ("Subtype", .name("Link")), ("Rect", rect.object),
                                  ("Border", .array([.int(0), .int(0), .int(0)])), ("F", .int(4)), ("P", .reference(target.reference)),
                                  ("A", .dictionary(PDFDictionary([("S", .name("URI")), ("URI", .string(Data(stamp.link.utf8)))])))])
        objects.append((annotation, .dictionary(link)))
        var annotations = try document.resolve(target.dictionary["Annots"])?.array ?? []
        annotations.append(.reference(annotation))

        // The page again, under its own number.
        var pageDictionary = target.dictionary
        pageDictionary["Resources"] = .dictionary(resources)
        pageDictionary["Contents"] = .array(contents)
        pageDictionary["Annots"] = .array(annotations)
        let pageReference = PDFReference(target.reference.number, document.generation(of: target.reference.number))
        objects.append((pageReference, .dictionary(pageDictionary)))

        return try IncrementalUpdate.append(objects, to: document, nextNumber: next)
    }

    /// The form's drawing: each polygon filled (non-zero winding) in the pen's colour, flipped from
    /// top-left to PDF's bottom-left origin.
    static func formContent(_ ink: SignatureInk) -> String {
        let (r, g, b) = ink.color.rgb
        var text = "\(f(r)) \(f(g)) \(f(b)) rg\n"
        for polygon in ink.polygons where polygon.count >= 3 {
            for (index, point) in polygon.enumerated() {
                text += "\(f(point.x)) \(f(ink.height - point.y)) \(index == 0 ? "m" : "l")\n"
            }
            text += "h f\n"
        }
        return text
    }

    /// The matrix that puts the stamp's box (its width × height as the reader sees it) into `rect`
    /// of a page shown turned clockwise by `rotation`, upright on the screen.
    public static func placement(of stamp: SignatureStamp, in rect: PDFRect, rotation: Int) -> [Double] {
        let w = stamp.width, h = stamp.height
        switch rotation {
        case 90: return [0, rect.height / w, -rect.width / h, 0, rect.maxX, rect.y]
        case 180: return [-rect.width / w, 0, 0, -rect.height / h, rect.maxX, rect.maxY]
        case 270: return [0, -rect.height / w, rect.width / h, 0, rect.x, rect.maxY]
        default: return [rect.width / w, 0, 0, rect.height / h, rect.x, rect.y]
        }
    }

    static func f(_ value: Double) -> String { PDFObject.format(value) }
}

/// Writes the new section of an incremental update: the objects, then a cross-reference section
/// of the kind the file's newest one is (a table, or a cross-reference stream), a trailer that
/// points back to the previous section, `startxref` and `%%EOF`.
enum IncrementalUpdate {
    static func append(_ objects: [(PDFReference, PDFObject)], to document: PDFDocument, nextNumber: Int) throws -> Data {
        var out = document.data
        if out.last != 10, out.last != 13 { out.append(10) }
        var offsets: [(PDFReference, Int)] = []
        for (reference, object) in objects {
            offsets.append((reference, out.count))
            out.append(contentsOf: Array("\(reference.number) \(reference.generation) obj\n".utf8))
            object.write(to: &out)
            out.append(contentsOf: Array("\nendobj\n".utf8))
        }
        var trailer = PDFDictionary()
        for key in ["Root", "Info", "ID"] { if let value = document.trailer[key] { trailer[key] = value } }
        let xrefOffset = out.count
        if document.usesXRefStreams {
            // The stream lists itself too.
            let own = PDFReference(nextNumber)
            offsets.append((own, xrefOffset))
            offsets.sort { $0.0 < $1.0 }
            var rows = Data()
            for (reference, offset) in offsets {
                rows.append(1)
                for shift in stride(from: 24, through: 0, by: -8) { rows.append(UInt8((offset >> shift) & 0xFF)) }
                rows.append(UInt8((reference.generation >> 8) & 0xFF))
                rows.append(UInt8(reference.generation & 0xFF))
            }
            var dictionary = PDFDictionary([("Type", .name("XRef")), ("Size", .int(nextNumber + 1))])
            dictionary["Index"] = .array(runs(offsets.map(\.0.number)).flatMap { [PDFObject.int($0.start), .int($0.count)] })
            dictionary["W"] = .array([.int(1), .int(4), .int(2)])
            dictionary["Prev"] = .int(document.lastXRefOffset)
            for (key, value) in trailer.pairs { dictionary[key] = value }
            out.append(contentsOf: Array("\(own.number) 0 obj\n".utf8))
            PDFObject.stream(dictionary, rows).write(to: &out)
            out.append(contentsOf: Array("\nendobj\n".utf8))
        } else {
            offsets.sort { $0.0 < $1.0 }
            out.append(contentsOf: Array("xref\n".utf8))
            var at = 0
            for run in runs(offsets.map(\.0.number)) {
                out.append(contentsOf: Array("\(run.start) \(run.count)\n".utf8))
                for (reference, offset) in offsets[at..<(at + run.count)] {
                    out.append(contentsOf: Array(String(format: "%010d %05d n\r\n", offset, reference.generation).utf8))
                }
                at += run.count
            }
            trailer["Size"] = .int(nextNumber)
            trailer["Prev"] = .int(document.lastXRefOffset)
            out.append(contentsOf: Array("trailer\n".utf8))
            PDFObject.dictionary(trailer).write(to: &out)
            out.append(10)
        }
        out.append(contentsOf: Array("startxref\n\(xrefOffset)\n%%EOF\n".utf8))
        return out
    }

    /// Sorted numbers as runs of consecutive ones.
    static func runs(_ numbers: [Int]) -> [(start: Int, count: Int)] {
        var result: [(start: Int, count: Int)] = []
        for number in numbers {
            if let last = result.last, last.start + last.count == number {
                result[result.count - 1].count += 1
            } else {
                result.append((number, 1))
            }
        }
        return result
    }
}

/// What the PDF image needs of a JPEG: its size and components, from the frame header.
struct JPEGInfo {
    var width: Int
    var height: Int
    var components: Int
    /// An Adobe APP14 marker: CMYK stored inverted.
    var adobeInverted = false

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw PDFError.malformed("the photo is not a JPEG") }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { throw PDFError.malformed("the photo is not a well-formed JPEG") }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2, at + 2 + length <= bytes.count else { break }
            if marker == 0xEE { adobeInverted = true }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC, length >= 8 {
                height = Int(bytes[at + 5]) << 8 | Int(bytes[at + 6])
                width = Int(bytes[at + 7]) << 8 | Int(bytes[at + 8])
                components = Int(bytes[at + 9])
                guard width > 0, height > 0, [1, 3, 4].contains(components) else { throw PDFError.malformed("the photo's JPEG frame is unusable") }
                return
            }
            at += 2 + length
        }
        throw PDFError.malformed("the photo is not a well-formed JPEG")
    }
}
