package dev.continuum.router.discovery;

import java.time.Instant;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Hand-built workers and fleet views for registry and renderer tests. */
final class Fleets {
    static final Instant T0 = Instant.parse("2026-09-23T04:11:02Z");

    private Fleets() {
    }

    static DynamoWorker worker(String namespace, long id, WorkerRole role, @Nullable String model) {
        ModelCard card = model == null ? null : new ModelCard(model, null, false, 64,
                new ModelCard.WorkerCapacity(12000L, 8192L, 256L, 32768L), 0, 1, null,
                ModelCard.CardArtifacts.NONE, null, "{}");
        return new DynamoWorker(new WorkerId(namespace, id), role, role.wireName(), "generate", card, T0, T0);
    }

    static FleetView fleet(DynamoWorker... workers) {
        return FleetView.of(List.of(workers), List.of());
    }
}
