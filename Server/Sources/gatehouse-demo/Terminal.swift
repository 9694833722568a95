import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Line input and output for the demo; a masked read for passwords when stdin is a terminal.
enum Terminal {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    static func line(_ text: String = "") { write(text + "\n") }

    /// Prints `prompt` and reads a line; nil at end of input.
    static func ask(_ prompt: String) -> String? {
        write(prompt)
        return readLine(strippingNewline: true)
    }

    /// `ask` on a thread of its own, leaving the caller's actor free while the person types.
    static func askOffMain(_ prompt: String) async -> String? {
        write(prompt)
        return await withCheckedContinuation { answered in
            Thread.detachNewThread { answered.resume(returning: readLine(strippingNewline: true)) }
        }
    }

    /// Reads a line showing `*` for each character typed (no echo of the text itself).
    static func askSecret(_ prompt: String) -> String? {
        write(prompt)
        guard isatty(STDIN_FILENO) == 1 else { return readLine(strippingNewline: true) }
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
        var bytes: [UInt8] = []
        while true {
            var byte: UInt8 = 0
            guard read(STDIN_FILENO, &byte, 1) == 1 else { return nil }
            switch byte {
            case 10, 13:
                write("\n")
                return String(decoding: bytes, as: UTF8.self)
            case 127, 8:
                if !bytes.isEmpty {
                    // drop a whole UTF-8 character
                    repeat { bytes.removeLast() } while !bytes.isEmpty && (bytes.last! & 0xC0) == 0x80
                    write("\u{8} \u{8}")
                }
            case 3, 4:
                write("\n")
                return nil
            default:
                bytes.append(byte)
                if byte & 0xC0 != 0x80 { write("*") }
            }
        }
    }
}
