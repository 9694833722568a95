import Foundation

/// How to run this executable again, as a person would type it: `swift run --package-path Server
/// gatehouse` when it was built and started by SwiftPM (the binary sits under `.build/`), its path
/// when started by path, `gatehouse` when found on PATH. Hints in logs and banners use it.
package enum GatehouseInvocation {
    package static let current: String = {
        let path = CommandLine.arguments.first ?? "gatehouse"
        if path.contains("/.build/") { return "swift run --package-path Server gatehouse" }
        return path.contains("/") ? path : "gatehouse"
    }()
}
