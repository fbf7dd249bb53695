package dev.continuum.router.kv.artifacts;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.EnumMap;
import java.util.Map;

/** {@code continuum_dynamo_kv_artifacts_total{result}}, every label registered up front. */
public final class ArtifactMetrics {
    public static final String NAME = "continuum_dynamo_kv_artifacts";

    private final Map<ArtifactResult, Counter> counters = new EnumMap<>(ArtifactResult.class);

    public ArtifactMetrics(MeterRegistry registry) {
        for (ArtifactResult r : ArtifactResult.values()) {
            counters.put(r, Counter.builder(NAME).description("KV artifact outcomes (pinning, fetch, cache)")
                    .tag("result", r.label()).register(registry));
        }
    }

    public void count(ArtifactResult result) {
        Counter c = counters.get(result);
        if (c != null) {
            c.increment();
        }
    }
}
