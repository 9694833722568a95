import Metrics
import NIOConcurrencyHelpers
import Prometheus

/// swift-metrics can be bootstrapped once per process; every application built in this process
/// (tests build many) reports into the same Prometheus registry.
package enum GatehouseMetrics {
    package static let registry = PrometheusCollectorRegistry()
    private static let bootstrapped = NIOLockedValueBox(false)

    package static func bootstrapOnce() {
        bootstrapped.withLockedValue { done in
            guard !done else { return }
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            done = true
        }
    }
}
