package dev.continuum.router.proxy;

import java.net.URI;
import java.util.List;

/**
 * A read-only view of one configured backend, for admin readback and tests.
 *
 * @param reportedModels what its last {@code /v1/models} health probe listed (empty when not probed that way)
 */
public record BackendStatus(String name, URI url, boolean enabled, boolean internal, HealthState health,
                            CircuitState circuit, int idleConnections, List<String> reportedModels) {
    public BackendStatus {
        reportedModels = List.copyOf(reportedModels);
    }
}
