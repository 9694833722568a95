import Hummingbird

// The request floor of Benchmarks/http: the same Hummingbird, NIO and compiler flags as the server
// (it is built from this package's resolved dependencies), one plaintext route and nothing else —
// no middleware, no WebSocket upgrade, no connection guard. What a Gatehouse route costs above this
// is what Gatehouse adds.
//
//     http-floor [port]        (default 8080, on 127.0.0.1)
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8080
let router = Router()
router.get("/health/live") { _, _ in "ok" }
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "floor"))
try await app.runService()
