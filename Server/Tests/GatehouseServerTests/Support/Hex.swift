extension Array where Element == UInt8 {
    /// The bytes a string of hex digit pairs writes (test vectors, digests); a test's own literal, so a bad one traps.
    init(hex: String) {
        self.init()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
    }
}
