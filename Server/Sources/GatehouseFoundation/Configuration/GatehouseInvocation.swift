import Foundation

/// How to run this executable again, as a person would type it: `swift run --package-path Server
/// gatehouse` when it was built and started by SwiftPM (the binary sits under `.build/`), its path
/// when started by path, `gatehouse` when found on PATH. Hints in logs and banners use it.
package enum GatehouseInvocation {
    package static let current = form(of: CommandLine.arguments.first ?? "gatehouse")

    /// How to type the executable started as `path` again.
    package static func form(of path: String) -> String {
        // A SwiftPM build product, however it was started (`swift run` passes an absolute path,
        // a person in `Server/` may type `.build/debug/gatehouse`): the README's form.
        if path.contains("/.build/") || path.hasPrefix(".build/") { return "swift run --package-path Server gatehouse" }
        return path.contains("/") ? path : "gatehouse"
    }
}
