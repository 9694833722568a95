import GatehouseFoundation
import GatehouseAPI
import Hummingbird
import Prometheus

/// Health and Prometheus metrics for operators and load balancers.
package struct HealthController: Sendable {
    /// Whether the database answers (readiness).
    package let ping: @Sendable () async throws -> Void
    /// Whether `/metrics` is served, and the token a scraper must show (none: anyone may read them).
    package let metrics: Bool
    package let metricsToken: String?


    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        // Liveness: the process answers; nothing else is asked. A restart is the cure when this fails,
        // which a database outage is not.
        let alive = ByteBuffer(string: "ok")
        router.route(ServerPages.Health.live) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: alive))
        }
        router.route(ServerPages.Health.health) { _, _ -> Response in
            // Ready only when the database answers: a load balancer should not send traffic otherwise.
            do {
                try await ping()
                return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok")))
            } catch {
                return Response(status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "database unavailable")))
            }
        }
        if metrics {
            let token = metricsToken
            router.route(ServerPages.Health.metrics) { request, _ -> Response in
                // With GATEHOUSE_METRICS_TOKEN set, only a scraper that shows it may read them.
                if let token, !Secrets.constantTimeEquals(request.bearerToken ?? "", token) {
                    return Response(status: .unauthorized, headers: [.wwwAuthenticate: "Bearer", .contentType: "text/plain; charset=utf-8"],
                                    body: .init(byteBuffer: ByteBuffer(string: "metrics need Authorization: Bearer <GATEHOUSE_METRICS_TOKEN>")))
                }
                return Response(
                    status: .ok,
                    headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: GatehouseMetrics.registry.emitToBuffer()))
                )
            }
        }
    }

    package init(ping: @escaping @Sendable () async throws -> Void, metrics: Bool, metricsToken: String?) {
        self.ping = ping
        self.metrics = metrics
        self.metricsToken = metricsToken
    }
}
