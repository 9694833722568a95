import CompressNIO
import Foundation
import NIOCore

/// The stream filters the reader needs for the file's own structure (object and cross-reference
/// streams): Flate (zlib, through compress-nio) with the PNG predictors. Page contents are never
/// decoded: the signature is added beside them.
enum PDFFilters {
    static func decode(_ raw: Data, dictionary: PDFDictionary) throws -> Data {
        let filters: [String]
        switch dictionary["Filter"] {
        case nil: filters = []
        case .name(let name)?: filters = [name]
        case .array(let items)?: filters = items.compactMap(\.name)
        default: throw PDFError.malformed("bad /Filter")
        }
        let parameters: [PDFDictionary?]
        switch dictionary["DecodeParms"] {
        case .dictionary(let single)?: parameters = [single]
        case .array(let items)?: parameters = items.map(\.dictionary)
        default: parameters = []
        }
        var data = raw
        for (index, filter) in filters.enumerated() {
            guard filter == "FlateDecode" || filter == "Fl" else { throw PDFError.malformed("unsupported filter \(filter)") }
            data = try inflate(data)
            if let parms = index < parameters.count ? parameters[index] : nil {
                data = try unpredict(data, parameters: parms)
            }
        }
        return data
    }

    static func inflate(_ data: Data) throws -> Data {
        var buffer = ByteBuffer(bytes: data)
        do {
            var output = try buffer.decompress(with: .zlib())
            return Data(output.readBytes(length: output.readableBytes) ?? [])
        } catch {
            throw PDFError.malformed("a Flate stream does not inflate")
        }
    }

    static func deflate(_ data: Data) throws -> Data {
        var buffer = ByteBuffer(bytes: data)
        var output = try buffer.compress(with: .zlib())
        return Data(output.readBytes(length: output.readableBytes) ?? [])
    }

    /// Undoes the PNG predictors (/Predictor 10–15): each row starts with its filter type.
    static func unpredict(_ data: Data, parameters: PDFDictionary) throws -> Data {
        let predictor = parameters["Predictor"]?.int ?? 1
        guard predictor >= 10 else {
            guard predictor == 1 else { throw PDFError.malformed("unsupported predictor \(predictor)") }
            return data
        }
        let colors = parameters["Colors"]?.int ?? 1, bits = parameters["BitsPerComponent"]?.int ?? 8
        let columns = parameters["Columns"]?.int ?? 1
        guard (1...32).contains(colors), [1, 2, 4, 8, 16].contains(bits), columns > 0, columns <= data.count * 8 else {
            throw PDFError.malformed("bad predictor parameters")
        }
        let pixel = max(1, colors * bits / 8)
        let rowLength = (colors * bits * columns + 7) / 8
        let input = [UInt8](data)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var previous = [UInt8](repeating: 0, count: rowLength)
        var at = 0
        while at + 1 + rowLength <= input.count {
            let type = input[at]
            var row = Array(input[(at + 1)...(at + rowLength)])
            for i in 0..<rowLength {
                let left = i >= pixel ? Int(row[i - pixel]) : 0
                let up = Int(previous[i])
                let upLeft = i >= pixel ? Int(previous[i - pixel]) : 0
                let add: Int
                switch type {
                case 0: add = 0
                case 1: add = left
                case 2: add = up
                case 3: add = (left + up) / 2
                case 4:
                    let p = left + up - upLeft
                    let pa = abs(p - left), pb = abs(p - up), pc = abs(p - upLeft)
                    add = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
                default: throw PDFError.malformed("bad PNG row filter \(type)")
                }
                row[i] = UInt8((Int(row[i]) + add) & 0xFF)
            }
            output += row
            previous = row
            at += 1 + rowLength
        }
        return Data(output)
    }
}
