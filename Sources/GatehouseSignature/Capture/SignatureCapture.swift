import Foundation

/// A signature being drawn with a finger or a pen (the Sign To Login spec: "the slower, the
/// thinner", a blue or black pen). The app feeds it touch samples; it keeps the strokes, answers
/// the points the server wants and the outline every drawing surface fills.
///
/// - The **wire points** are the touches as they came, every stroke's in order, one array per
///   signature (the spec's `signature_contents`; the verifier reads the spacing as speed).
/// - The **ink** is drawn from the touches smoothed (a moving average over three) with a width that
///   follows the speed, eased between samples so a stroke does not jump in width: one filled
///   trapezoid per segment and a round joint at every sample, so any surface that fills polygons
///   (UIKit's `UIBezierPath`, the PDF writer) draws the same line.
public struct SignatureCapture: Equatable, Sendable {
    /// One touch: where (points, origin top left) and when (seconds, any origin).
    public struct Sample: Equatable, Sendable, Codable {
        /// Points from the left.
        public var x: Double
        /// Points from the top.
        public var y: Double
        /// Seconds (the touch's timestamp; only differences count).
        public var time: Double
        /// A touch at `x`, `y` at `time`.
        public init(x: Double, y: Double, time: Double) {
            self.x = x
            self.y = y
            self.time = time
        }
    }

    /// How the line is drawn and what counts as long enough.
    public struct Configuration: Equatable, Sendable {
        /// The width of the slowest line.
        public var minimumWidth = 1.2
        /// The width of the fastest line.
        public var maximumWidth = 4.5
        /// The speed (points per second) from which the line is widest.
        public var speedForMaximumWidth = 1_400.0
        /// How much of the new width a sample takes (0…1); the rest is the previous width.
        public var widthEasing = 0.35
        /// What "long enough" means: as the server's verifier (16 points, 10 points across).
        public var minimumPoints = 16
        /// At least this many points across (width or height).
        public var minimumExtent = 10.0
        /// The defaults: widths 1.2–4.5, the widest from 1,400 points per second, easing 0.35, 16 points over 10 across.
        public init() {}
    }

    /// How the ink is drawn (change it before drawing).
    public var configuration: Configuration
    /// The pen's colour (the spec's blue or black).
    public var color: PenColor
    /// The strokes drawn so far, each the touches of one finger-down to finger-up, in order.
    public private(set) var strokes: [[Sample]] = []
    private var drawing = false

    /// An empty pad with a pen of `color`.
    public init(color: PenColor = .blue, configuration: Configuration = Configuration()) {
        self.color = color
        self.configuration = configuration
    }

    // MARK: Touches

    /// A finger touched down: a new stroke starts at `sample` (`touchesBegan`).
    public mutating func begin(_ sample: Sample) {
        strokes.append([sample])
        drawing = true
    }

    /// The finger moved: `sample` joins the current stroke (`touchesMoved`, with the coalesced touches);
    /// a repeat of the last sample is ignored, and a move without a begin starts a stroke.
    public mutating func move(_ sample: Sample) {
        guard drawing, !strokes.isEmpty else { return begin(sample) }
        if let last = strokes[strokes.count - 1].last, last.x == sample.x, last.y == sample.y, last.time == sample.time { return }
        strokes[strokes.count - 1].append(sample)
    }

    /// The finger lifted (`touchesEnded`), at `sample` when given.
    public mutating func end(_ sample: Sample? = nil) {
        if let sample { move(sample) }
        drawing = false
    }

    /// Takes back the last stroke.
    public mutating func undo() {
        guard !strokes.isEmpty else { return }
        strokes.removeLast()
        drawing = false
    }

    /// Takes back every stroke.
    public mutating func clear() {
        strokes = []
        drawing = false
    }

    /// Whether nothing is drawn.
    public var isEmpty: Bool { strokes.isEmpty }

    // MARK: What it makes

    /// The pen-down points in order, as `/register/` and `/authenticate/` want them.
    public var wirePoints: [(x: Double, y: Double)] { strokes.flatMap { $0.map { (x: $0.x, y: $0.y) } } }

    /// Whether the server can use it: enough points, and not a dot.
    public var isLongEnough: Bool {
        let points = wirePoints
        guard points.count >= configuration.minimumPoints else { return false }
        let width = (points.map(\.x).max() ?? 0) - (points.map(\.x).min() ?? 0)
        let height = (points.map(\.y).max() ?? 0) - (points.map(\.y).min() ?? 0)
        return max(width, height) >= configuration.minimumExtent
    }

    /// The line's width at each sample of a stroke: from the speed, eased.
    public func widths(_ stroke: [Sample]) -> [Double] {
        let c = configuration
        var widths: [Double] = []
        var current = c.minimumWidth + (c.maximumWidth - c.minimumWidth) / 3
        for (index, sample) in stroke.enumerated() {
            if index > 0 {
                let previous = stroke[index - 1]
                let distance = hypot(sample.x - previous.x, sample.y - previous.y)
                let elapsed = max(sample.time - previous.time, 1.0 / 240)
                let share = min(1, distance / elapsed / c.speedForMaximumWidth)
                let target = c.minimumWidth + (c.maximumWidth - c.minimumWidth) * share
                current += (target - current) * c.widthEasing
            }
            widths.append(current)
        }
        return widths
    }

    /// The outline to fill, in a box of `width` × `height` (the drawing surface's size).
    public func ink(width: Double, height: Double) -> SignatureInk {
        var polygons: [[SignatureInk.Point]] = []
        for stroke in strokes where !stroke.isEmpty {
            let widths = widths(stroke)
            let points = Self.smoothed(stroke)
            for index in points.indices {
                polygons.append(Self.joint(points[index], radius: widths[index] / 2))
                guard index + 1 < points.count else { continue }
                let a = points[index], b = points[index + 1]
                let length = hypot(b.x - a.x, b.y - a.y)
                guard length > 1e-6 else { continue }
                let nx = -(b.y - a.y) / length, ny = (b.x - a.x) / length
                let ra = widths[index] / 2, rb = widths[index + 1] / 2
                polygons.append([
                    .init(x: a.x + nx * ra, y: a.y + ny * ra), .init(x: b.x + nx * rb, y: b.y + ny * rb),
                    .init(x: b.x - nx * rb, y: b.y - ny * rb), .init(x: a.x - nx * ra, y: a.y - ny * ra),
                ])
            }
        }
        return SignatureInk(width: width, height: height, polygons: polygons, color: color)
    }

    /// A moving average over three samples (the ends stay where they are).
    static func smoothed(_ stroke: [Sample]) -> [SignatureInk.Point] {
        stroke.indices.map { i in
            guard i > 0, i + 1 < stroke.count else { return .init(x: stroke[i].x, y: stroke[i].y) }
            return .init(x: (stroke[i - 1].x + stroke[i].x + stroke[i + 1].x) / 3, y: (stroke[i - 1].y + stroke[i].y + stroke[i + 1].y) / 3)
        }
    }

    /// A round joint: an octagon.
    static func joint(_ center: SignatureInk.Point, radius: Double) -> [SignatureInk.Point] {
        (0..<8).map { k in
            let angle = Double(k) * .pi / 4
            return .init(x: center.x + radius * cos(angle), y: center.y + radius * sin(angle))
        }
    }

    /// Equal when the strokes, the colour and the configuration are.
    public static func == (a: SignatureCapture, b: SignatureCapture) -> Bool {
        a.strokes == b.strokes && a.color == b.color && a.configuration == b.configuration
    }
}
