import Foundation
import GatehouseKit
import GatehouseSignature

/// What every Sign To Login screen needs: the client with the app's key, the strings, what the
/// device remembers of the person, the app's documents folder, and the clock the splash waits on.
public struct SignToLoginEnvironment: Sendable {
    /// The client of the server's Sign To Login endpoints.
    public let client: SignToLoginClient
    /// The screens' words.
    public let localizer: Localizer
    /// The remembered person (the spec: "a registered user goes straight to the documents list, with
    /// email and data remembered").
    public let preferences: any DevicePreferences
    /// The app's Documents folder: the PDFs the list shows and signed files are written to.
    public let documentsFolder: URL
    /// Below this similarity an authentication is shown as not matching (the spec's example: 74%).
    public var acceptSimilarity: Double
    /// How long the splash shows at least (the spec: 1–3 s).
    public var splashSeconds: Double
    /// Waits; tests pass one that returns at once.
    public let sleep: @Sendable (Double) async -> Void

    /// The environment: the client, the words, where to remember the person, the documents' folder, and how long the splash shows.
    public init(client: SignToLoginClient, localizer: Localizer = .device, preferences: any DevicePreferences = UserDefaultsPreferences(),
                documentsFolder: URL, acceptSimilarity: Double = 0.74, splashSeconds: Double = 1.5,
                sleep: @escaping @Sendable (Double) async -> Void = { seconds in try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }) {
        self.client = client
        self.localizer = localizer
        self.preferences = preferences
        self.documentsFolder = documentsFolder
        self.acceptSimilarity = acceptSimilarity
        self.splashSeconds = splashSeconds
        self.sleep = sleep
    }

    /// The text for a failed call.
    func message(for error: any Error) -> String {
        switch error {
        case SignToLoginError.applicationRefused(let message), SignToLoginError.invalidInput(let message),
             SignToLoginError.tooLarge(let message), SignToLoginError.invalidEmailCode(let message):
            return message.isEmpty ? localizer("error.server") : message
        case SignToLoginError.rateLimited(let retryAfter): return localizer("stl.error.rateLimited", String(retryAfter ?? 60))
        case SignToLoginError.signatureReplayed: return localizer("stl.error.replayed")
        case SignToLoginError.sessionRequired: return localizer("stl.error.session")
        case SignToLoginError.transport: return localizer("error.network")
        case is CancellationError: return ""
        default: return localizer("error.server")
        }
    }

    // MARK: The remembered person

    static let profileKey = "stl.profile"

    /// The profile of the person registered or logged in on this device, if any (no photo, no
    /// secrets: the spec's app signs in by signature, the email names the account).
    public var rememberedProfile: SignToLoginProfile? {
        preferences.string(Self.profileKey).flatMap { try? JSONDecoder().decode(SignToLoginProfile.self, from: Data($0.utf8)) }
    }

    func remember(_ profile: SignToLoginProfile?) {
        preferences.set(profile.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }, for: Self.profileKey)
    }
}

/// The drawing pad every signing screen shows: the capture, the pen colour, undo and clear. The
/// UI feeds it touches and draws `state.ink`.
@MainActor
public final class SignaturePadModel: ScreenModel<SignaturePadModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The outline to fill, in the pad's size.
        public var ink: SignatureInk
        /// The pen's colour.
        public var color: PenColor
        /// Whether the signature can be used (enough points, not a dot).
        public var isLongEnough = false
        /// Whether nothing is drawn.
        public var isEmpty = true
        /// The colour buttons' titles.
        public var colorTitles: [PenColor: String]
        /// The "undo" button's title.
        public var undoTitle: String
        /// The "clear" button's title.
        public var clearTitle: String
    }

    /// The drawing so far.
    public private(set) var capture: SignatureCapture
    private let width: Double, height: Double

    /// An empty pad of `width` × `height` points with a pen of `color`.
    public init(localizer: Localizer, width: Double = 600, height: Double = 240, color: PenColor = .blue) {
        capture = SignatureCapture(color: color)
        self.width = width
        self.height = height
        super.init(state: State(ink: SignatureInk(width: width, height: height, polygons: [], color: color), color: color,
                                colorTitles: [.blue: localizer("stl.pad.blue"), .black: localizer("stl.pad.black")],
                                undoTitle: localizer("stl.pad.undo"), clearTitle: localizer("stl.pad.clear")))
    }

    /// A finger touched down.
    public func begin(x: Double, y: Double, time: Double) { change { $0.begin(.init(x: x, y: y, time: time)) } }
    /// The finger moved.
    public func move(x: Double, y: Double, time: Double) { change { $0.move(.init(x: x, y: y, time: time)) } }
    /// The finger lifted.
    public func end() { change { $0.end() } }
    /// Takes back the last stroke.
    public func undo() { change { $0.undo() } }
    /// Takes back every stroke.
    public func clear() { change { $0.clear() } }
    /// Changes the pen's colour.
    public func setColor(_ color: PenColor) { change { $0.color = color } }

    /// The points for the server.
    public var points: SignaturePointList { capture.wirePoints }

    private func change(_ body: (inout SignatureCapture) -> Void) {
        body(&capture)
        let capture = self.capture
        update {
            $0.ink = capture.ink(width: width, height: height)
            $0.color = capture.color
            $0.isLongEnough = capture.isLongEnough
            $0.isEmpty = capture.isEmpty
        }
    }
}
