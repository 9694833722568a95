import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key as the full-screen demo reads it.
enum Key: Equatable, Sendable {
    case up, down, left, right, enter, backspace, tab, escape, pageUp, pageDown, space
    case char(Character)
    /// Ctrl with a letter (Ctrl-C is `ctrl("c")`).
    case ctrl(Character)
    /// The end of input.
    case end
}

/// The terminal in full-screen mode: the alternate screen, no echo, keys one by one (arrows
/// parsed from their escape sequences), frames drawn whole and only when they change.
final class FullScreen: @unchecked Sendable {
    private var original = termios()
    private var isRaw = false
    private var lastFrame: [String] = []
    private let active = Active()
    let keys: AsyncStream<Key>
    private let continuation: AsyncStream<Key>.Continuation

    init() {
        (keys, continuation) = AsyncStream.makeStream(of: Key.self)
    }

    /// Switches to the alternate screen and raw input, and starts reading keys.
    func enter() {
        if isatty(STDIN_FILENO) == 1 {
            tcgetattr(STDIN_FILENO, &original)
            var raw = original
            raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG)
            raw.c_iflag &= ~tcflag_t(ICRNL | IXON)
            tcsetattr(STDIN_FILENO, TCSANOW, &raw)
            isRaw = true
        }
        Terminal.write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        lastFrame = []
        let continuation = continuation
        let active = active
        active.set(true)
        Thread { Self.readKeys(into: continuation, while: active) }.start()
    }

    /// Back to the normal screen and line input.
    func leave() {
        active.set(false)
        continuation.finish()
        Terminal.write("\u{1B}[?25h\u{1B}[?1049l")
        if isRaw { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
        isRaw = false
    }

    /// The terminal's size (rows, columns); 24×80 when it cannot tell.
    var size: (rows: Int, columns: Int) {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 {
            return (Int(size.ws_row), Int(size.ws_col))
        }
        return (24, 80)
    }

    /// Draws `lines` (cut to the screen), unless they are what is already shown.
    func draw(_ lines: [String]) {
        let (rows, columns) = size
        let frame = lines.prefix(rows).map { String($0.prefix(columns)) }
        guard frame != lastFrame else { return }
        lastFrame = frame
        var text = "\u{1B}[H"
        for (index, line) in frame.enumerated() {
            text += line + "\u{1B}[K" + (index < frame.count - 1 ? "\r\n" : "")
        }
        Terminal.write(text + "\u{1B}[J")
    }

    /// Whether keys are still read (the messenger may hand the terminal back to line input).
    private final class Active: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set(_ new: Bool) { lock.withLock { value = new } }
        var isOn: Bool { lock.withLock { value } }
    }

    private static func readKeys(into continuation: AsyncStream<Key>.Continuation, while active: Active) {
        /// A byte within `timeout` ms; `.some(nil)` at the end of input.
        func byte(timeout: Int32) -> UInt8?? {
            var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, timeout) > 0 else { return nil }
            var value: UInt8 = 0
            return read(STDIN_FILENO, &value, 1) == 1 ? .some(value) : .some(nil)
        }
        func next(timeout: Int32) -> UInt8? { byte(timeout: timeout).flatMap { $0 } }
        /// A byte read after ESC that did not start a sequence: the next key's.
        var pending: UInt8?
        while active.isOn {
            let first: UInt8
            if let held = pending {
                first = held
                pending = nil
            } else {
                guard let got = byte(timeout: 100) else { continue }
                guard let value = got else {
                    continuation.yield(.end)
                    continuation.finish()
                    return
                }
                first = value
            }
            switch first {
            case 27:
                guard let second = next(timeout: 50) else { continuation.yield(.escape); continue }
                guard second == 91 || second == 79 else {
                    continuation.yield(.escape)
                    pending = second
                    continue
                }
                guard let third = next(timeout: 50) else { continuation.yield(.escape); continue }
                switch third {
                case 65: continuation.yield(.up)
                case 66: continuation.yield(.down)
                case 67: continuation.yield(.right)
                case 68: continuation.yield(.left)
                case 53, 54:
                    _ = next(timeout: 50)  // the "~"
                    continuation.yield(third == 53 ? .pageUp : .pageDown)
                default: continue
                }
            case 10, 13: continuation.yield(.enter)
            case 127, 8: continuation.yield(.backspace)
            case 9: continuation.yield(.tab)
            case 32: continuation.yield(.space)
            case 1...26: continuation.yield(.ctrl(Character(UnicodeScalar(first + 96))))
            default:
                // One UTF-8 character: the lead byte says how many follow.
                var bytes = [first]
                let more = first >= 0xF0 ? 3 : first >= 0xE0 ? 2 : first >= 0xC0 ? 1 : 0
                for _ in 0..<more { if let following = next(timeout: 50) { bytes.append(following) } }
                if let character = String(bytes: bytes, encoding: .utf8)?.first { continuation.yield(.char(character)) }
            }
        }
    }
}
