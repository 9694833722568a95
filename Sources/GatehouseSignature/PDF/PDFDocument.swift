import Foundation

/// A PDF file opened for reading: its cross-reference (classic tables, cross-reference streams and
/// hybrid files, following every earlier update through `/Prev`), its objects (also those inside
/// object streams) and its pages.
public struct PDFDocument: Sendable {
    /// The file's bytes, as read.
    public let data: Data
    let bytes: [UInt8]
    /// Where each object is: at an offset, or the `index`-th of an object stream.
    enum Location: Sendable, Equatable {
        case offset(Int)
        case compressed(stream: Int, index: Int)
    }

    private(set) var locations: [Int: (generation: Int, location: Location)] = [:]
    /// The newest trailer (for a cross-reference stream, its dictionary).
    public private(set) var trailer = PDFDictionary()
    /// Where the newest cross-reference section starts (`startxref`).
    public private(set) var lastXRefOffset = 0
    /// Whether the newest section is a cross-reference stream (an update must then write one too).
    public private(set) var usesXRefStreams = false
    /// One more than the largest object number in use.
    public var size: Int { max(trailer["Size"]?.int ?? 0, (locations.keys.max() ?? 0) + 1) }

    /// Reads the file's structure: the header, every cross-reference section back to the first, the trailer.
    /// Throws ``PDFError/malformed(_:)`` for what is not a PDF and ``PDFError/encrypted`` for an encrypted one.
    public init(data: Data) throws {
        self.data = data
        bytes = [UInt8](data)
        guard bytes.count > 8, String(decoding: bytes.prefix(1024), as: UTF8.self).contains("%PDF-") else {
            throw PDFError.malformed("no %PDF- header")
        }
        // startxref, in the last 2 KiB.
        let tail = String(decoding: bytes.suffix(2048), as: UTF8.self)
        guard let marker = tail.range(of: "startxref", options: .backwards) else { throw PDFError.malformed("no startxref") }
        var parser = PDFParser(Array(tail.utf8), at: tail.utf8.distance(from: tail.utf8.startIndex, to: marker.upperBound))
        guard let offset = Int(parser.word()), offset >= 0, offset < bytes.count else { throw PDFError.malformed("bad startxref") }
        lastXRefOffset = offset
        trailer = PDFDictionary()
        var seen = Set<Int>()
        var next: Int? = offset
        var first = true
        var newestIsStream = false
        while let at = next, !seen.contains(at) {
            seen.insert(at)
            let (section, isStream) = try readSection(at: at)
            if first {
                trailer = section
                newestIsStream = isStream
                first = false
            }
            // A hybrid file's table names a stream with the compressed objects.
            if let stream = section["XRefStm"]?.int, !seen.contains(stream) {
                seen.insert(stream)
                _ = try readSection(at: stream)
            }
            next = section["Prev"]?.int
        }
        usesXRefStreams = newestIsStream
        if trailer["Encrypt"] != nil { throw PDFError.encrypted }
        guard trailer["Root"]?.reference != nil else { throw PDFError.malformed("no /Root in the trailer") }
    }

    // MARK: Cross-reference

    /// Reads one section and records the objects it names that a newer one has not.
    private mutating func readSection(at offset: Int) throws -> (PDFDictionary, Bool) {
        var parser = PDFParser(bytes, at: offset)
        if parser.word(peek: true) == "xref" {
            _ = parser.word()
            while true {
                let token = parser.word(peek: true)
                if token == "trailer" { break }
                guard let start = Int(parser.word()), let count = Int(parser.word()), start >= 0, count >= 0, count < 10_000_000 else {
                    throw PDFError.malformed("bad xref subsection at \(parser.position)")
                }
                for number in start..<(start + count) {
                    guard let field = Int(parser.word()), let generation = Int(parser.word()) else {
                        throw PDFError.malformed("bad xref entry at \(parser.position)")
                    }
                    let kind = parser.word()
                    if locations[number] == nil, kind == "n", field > 0 {
                        locations[number] = (generation, .offset(field))
                    } else if locations[number] == nil, kind == "f" {
                        locations[number] = (generation, .offset(0))
                    }
                }
            }
            try parser.expect("trailer")
            guard case .dictionary(let trailer) = try parser.object() else { throw PDFError.malformed("bad trailer") }
            return (trailer, false)
        }
        // A cross-reference stream: `n g obj <<…/Type/XRef…>> stream`.
        _ = parser.word()
        _ = parser.word()
        try parser.expect("obj")
        guard case .stream(let dictionary, let raw) = try parser.object(resolveLength: { self.directInt($0) }) else {
            throw PDFError.malformed("no cross-reference at \(offset)")
        }
        let decoded = try PDFFilters.decode(raw, dictionary: dictionary)
        guard let widths = dictionary["W"]?.array?.compactMap(\.int), widths.count == 3, widths.allSatisfy({ (0...8).contains($0) }) else {
            throw PDFError.malformed("bad /W")
        }
        let size = dictionary["Size"]?.int ?? 0
        let index = dictionary["Index"]?.array?.compactMap(\.int) ?? [0, size]
        let rowLength = widths.reduce(0, +)
        guard rowLength > 0 else { throw PDFError.malformed("bad /W") }
        var row = 0
        func field(_ at: Int, _ width: Int, default value: Int) -> Int {
            guard width > 0 else { return value }
            var result = 0
            for k in 0..<width { result = result << 8 | Int(decoded[at + k]) }
            return result
        }
        var pair = 0
        while pair + 1 < index.count {
            guard index[pair] >= 0, index[pair + 1] >= 0, index[pair + 1] <= decoded.count / rowLength else {
                throw PDFError.malformed("bad /Index")
            }
            for number in index[pair]..<(index[pair] + index[pair + 1]) {
                let at = row * rowLength
                guard at + rowLength <= decoded.count else { throw PDFError.malformed("short cross-reference stream") }
                let kind = field(at, widths[0], default: 1)
                let second = field(at + widths[0], widths[1], default: 0)
                let third = field(at + widths[0] + widths[1], widths[2], default: 0)
                if locations[number] == nil {
                    switch kind {
                    case 1: locations[number] = (third, .offset(second))
                    case 2: locations[number] = (0, .compressed(stream: second, index: third))
                    case 0: locations[number] = (third, .offset(0))
                    default: break
                    }
                }
                row += 1
            }
            pair += 2
        }
        return (dictionary, true)
    }

    private func directInt(_ object: PDFObject) -> Int? {
        if let value = object.int { return value }
        if let reference = object.reference { return (try? self.object(reference))?.int }
        return nil
    }

    // MARK: Objects

    /// The object a reference names (`null` for a free or missing one, as the standard says).
    public func object(_ reference: PDFReference) throws -> PDFObject {
        try object(number: reference.number, depth: 0)
    }

    private func object(number: Int, depth: Int) throws -> PDFObject {
        guard depth < 8, let entry = locations[number] else { return .null }
        switch entry.location {
        case .offset(0):
            return .null
        case .offset(let offset):
            guard offset < bytes.count else { throw PDFError.malformed("object \(number) beyond the end") }
            var parser = PDFParser(bytes, at: offset)
            guard Int(parser.word()) == number else { throw PDFError.malformed("object \(number) is not at \(offset)") }
            _ = parser.word()
            try parser.expect("obj")
            return try parser.object(resolveLength: { value in
                if let int = value.int { return int }
                if let reference = value.reference { return (try? self.object(number: reference.number, depth: depth + 1))?.int }
                return nil
            })
        case .compressed(let streamNumber, let index):
            guard case .stream(let dictionary, let raw) = try object(number: streamNumber, depth: depth + 1),
                  let count = dictionary["N"]?.int, let first = dictionary["First"]?.int, index < count else {
                throw PDFError.malformed("object stream \(streamNumber)")
            }
            let decoded = [UInt8](try PDFFilters.decode(raw, dictionary: dictionary))
            var header = PDFParser(decoded)
            var offsets: [(Int, Int)] = []
            for _ in 0..<count {
                guard let n = Int(header.word()), let o = Int(header.word()) else { throw PDFError.malformed("object stream header") }
                offsets.append((n, o))
            }
            guard offsets[index].0 == number, first + offsets[index].1 < decoded.count else {
                throw PDFError.malformed("object \(number) not in stream \(streamNumber)")
            }
            var parser = PDFParser(decoded, at: first + offsets[index].1)
            return try parser.object()
        }
    }

    /// An object or, for a reference, the object it names.
    public func resolve(_ object: PDFObject?) throws -> PDFObject? {
        guard let object else { return nil }
        if let reference = object.reference { return try self.object(reference) }
        return object
    }

    /// The generation of object `number` as the cross-reference gives it (0 when unknown).
    public func generation(of number: Int) -> Int { locations[number]?.generation ?? 0 }

    // MARK: Pages

    /// A page: its object, its dictionary and what it inherits from the page tree.
    public struct Page: Sendable {
        /// The page object's number.
        public var reference: PDFReference
        /// The page's own dictionary.
        public var dictionary: PDFDictionary
        /// The page's resources, its own or inherited (resolved to a dictionary).
        public var resources: PDFDictionary
        /// The page's full size (inherited when the page sets none).
        public var mediaBox: PDFRect
        /// The visible area (the media box when the page sets none).
        public var cropBox: PDFRect
        /// Clockwise degrees the page is turned when shown: 0, 90, 180 or 270.
        public var rotation: Int
    }

    /// The URIs of every page's Link annotations, page by page (a signed document's history links).
    public func linkURIs() throws -> [[String]] {
        try pages().map { page in
            try (try resolve(page.dictionary["Annots"])?.array ?? []).compactMap { item in
                guard let annotation = try resolve(item)?.dictionary, annotation["Subtype"]?.name == "Link",
                      let action = try resolve(annotation["A"])?.dictionary, case .string(let uri)? = try resolve(action["URI"]) else { return nil }
                return String(decoding: uri, as: UTF8.self)
            }
        }
    }

    /// The pages in order.
    public func pages() throws -> [Page] {
        guard let root = try resolve(trailer["Root"])?.dictionary, let top = root["Pages"]?.reference else {
            throw PDFError.malformed("no page tree")
        }
        var pages: [Page] = []
        var visited = Set<Int>()
        func walk(_ reference: PDFReference, inherited: PDFDictionary, depth: Int) throws {
            guard visited.insert(reference.number).inserted, visited.count < 100_000, depth < 64 else {
                throw PDFError.malformed("page tree loops or is too deep")
            }
            guard let node = try object(reference).dictionary else { throw PDFError.malformed("page tree node \(reference.number)") }
            var inherits = inherited
            for key in ["Resources", "MediaBox", "CropBox", "Rotate"] where node[key] != nil { inherits[key] = node[key] }
            if node["Type"]?.name == "Pages" || node["Kids"] != nil {
                for kid in try resolve(node["Kids"])?.array ?? [] {
                    guard let kidReference = kid.reference else { throw PDFError.malformed("a page is not an indirect object") }
                    try walk(kidReference, inherited: inherits, depth: depth + 1)
                }
                return
            }
            let resources = try resolve(inherits["Resources"])?.dictionary ?? PDFDictionary()
            guard let media = try PDFRect(try resolve(inherits["MediaBox"]), in: self) else { throw PDFError.malformed("page without /MediaBox") }
            let crop = (try PDFRect(try resolve(inherits["CropBox"]), in: self))?.intersection(media) ?? media
            let rotate = ((try resolve(inherits["Rotate"])?.int ?? 0) % 360 + 360) % 360
            pages.append(Page(reference: reference, dictionary: node, resources: resources, mediaBox: media, cropBox: crop,
                              rotation: rotate / 90 * 90))
        }
        try walk(top, inherited: PDFDictionary(), depth: 0)
        return pages
    }
}

/// A rectangle in a page's user space (points, origin bottom left).
public struct PDFRect: Equatable, Sendable, Codable {
    /// The left edge.
    public var x: Double
    /// The bottom edge.
    public var y: Double
    /// Points across.
    public var width: Double
    /// Points up.
    public var height: Double

    /// A rectangle from its bottom-left corner and its size.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    init?(_ object: PDFObject?, in document: PDFDocument) throws {
        guard let items = object?.array, items.count == 4 else { return nil }
        let numbers = try items.map { try document.resolve($0)?.number }
        guard let a = numbers[0], let b = numbers[1], let c = numbers[2], let d = numbers[3] else { return nil }
        self.init(x: min(a, c), y: min(b, d), width: abs(c - a), height: abs(d - b))
    }

    /// The right edge.
    public var maxX: Double { x + width }
    /// The top edge.
    public var maxY: Double { y + height }

    func intersection(_ other: PDFRect) -> PDFRect? {
        let x0 = max(x, other.x), y0 = max(y, other.y), x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        return x1 > x0 && y1 > y0 ? PDFRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0) : nil
    }

    var object: PDFObject { .array([.real(x), .real(y), .real(maxX), .real(maxY)]) }
}
