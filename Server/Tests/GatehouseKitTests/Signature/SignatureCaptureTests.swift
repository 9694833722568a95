import Foundation
import GatehouseSignature
import Testing

@Suite("Sign To Login: signature capture")
struct SignatureCaptureTests {
    /// A signature written at `speed` points per second, sampled at 60 Hz: two strokes.
    static func write(_ capture: inout SignatureCapture, speed: Double) {
        var time = 0.0
        for stroke in 0..<2 {
            var x = 60.0 + Double(stroke) * 150, y = 50.0
            capture.begin(.init(x: x, y: y, time: time))
            for i in 1...40 {
                time += 1.0 / 60
                let angle = Double(i) / 5
                x += cos(angle) * speed / 60
                y += sin(angle) * speed / 60
                capture.move(.init(x: x, y: y, time: time))
            }
            capture.end()
            time += 0.3
        }
    }

    @Test("the slower, the thinner: width follows speed within the configured bounds")
    func widthFollowsSpeed() {
        // setup
        var slow = SignatureCapture(), fast = SignatureCapture()

        // MUT
        Self.write(&slow, speed: 150)
        Self.write(&fast, speed: 1_500)

        // validate
        let slowWidths = slow.strokes.flatMap { slow.widths($0) }, fastWidths = fast.strokes.flatMap { fast.widths($0) }
        let c = SignatureCapture.Configuration()
        #expect(slowWidths.allSatisfy { $0 >= c.minimumWidth && $0 <= c.maximumWidth })
        #expect(fastWidths.allSatisfy { $0 >= c.minimumWidth && $0 <= c.maximumWidth })
        #expect(slowWidths.last! < 2 && fastWidths.last! > 4, "\(slowWidths.last!) \(fastWidths.last!)")
    }

    @Test("wire points are the touches in order across strokes; undo takes back the last stroke, clear everything")
    func wirePointsUndoAndClear() {
        // setup
        var capture = SignatureCapture(color: .black)
        Self.write(&capture, speed: 400)
        let touches = capture.strokes.flatMap { $0 }

        // validate: every touch, in order
        #expect(capture.wirePoints.count == 82)
        #expect(zip(capture.wirePoints, touches).allSatisfy { $0.x == $1.x && $0.y == $1.y })
        #expect(capture.isLongEnough)

        // MUT: undo, clear
        capture.undo()
        #expect(capture.strokes.count == 1 && capture.wirePoints.count == 41)
        capture.clear()
        #expect(capture.isEmpty && !capture.isLongEnough)
    }

    @Test("too short: a tap, a few points, a dot of many points are not long enough")
    func longEnough() {
        var tap = SignatureCapture()
        tap.begin(.init(x: 10, y: 10, time: 0))
        tap.end()
        #expect(!tap.isLongEnough)

        var dot = SignatureCapture()
        dot.begin(.init(x: 10, y: 10, time: 0))
        for i in 1...40 { dot.move(.init(x: 10 + Double(i % 3), y: 10, time: Double(i) / 60)) }
        dot.end()
        #expect(dot.wirePoints.count == 41 && !dot.isLongEnough)
    }

    @Test("the ink covers every sample of every stroke and nothing far from them, in the pen's colour")
    func inkCoversTheStrokes() {
        // setup
        var capture = SignatureCapture(color: .black)
        Self.write(&capture, speed: 600)

        // MUT
        let ink = capture.ink(width: 400, height: 150)

        // validate
        #expect(ink.color == .black && ink.width == 400)
        for stroke in capture.strokes {
            for (i, sample) in stroke.enumerated() where i > 0 && i + 1 < stroke.count {
                let smoothed = SignatureInk.Point(x: (stroke[i - 1].x + sample.x + stroke[i + 1].x) / 3,
                                                  y: (stroke[i - 1].y + sample.y + stroke[i + 1].y) / 3)
                #expect(ink.covers(x: smoothed.x, y: smoothed.y))
            }
        }
        #expect(!ink.covers(x: 390, y: 5))
    }
}
