import Foundation

/// Opaque page cursors: the sort key of the last item, base64url, checked on the way back.
package enum PageCursor {
    package static func make(_ parts: [String]) -> String {
        Data(parts.joined(separator: "\u{1F}").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    package static func read(_ cursor: String?, parts count: Int) throws -> [String]? {
        guard let cursor, !cursor.isEmpty else { return nil }
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard cursor.utf8.count <= 1_024, let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\u{1F}" })
        else { throw invalid }
        let parts = text.components(separatedBy: "\u{1F}")
        guard parts.count == count else { throw invalid }
        return parts
    }

    package static var invalid: GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.invalidCursor"), field: "cursor")
    }
}
