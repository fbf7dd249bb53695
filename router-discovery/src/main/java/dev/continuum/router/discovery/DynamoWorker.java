package dev.continuum.router.discovery;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One routable (or at least visible) Dynamo worker: a {@code generate} endpoint record joined with its
 * model card.
 *
 * @param id          namespace and instance ID
 * @param role        resolved from the component name and the card (see {@code docs/discovery.md})
 * @param component   the endpoint record's component ({@code prefill}, {@code decode}, {@code backend}, ...)
 * @param endpoint    always {@code generate} today; kept for the admin API
 * @param card        the joined model card, or null when none joined (yet)
 * @param firstSeen   when this reducer first materialized the worker; survives resyncs and reconnects
 * @param lastUpdated when the worker's published view last changed
 */
public record DynamoWorker(
        WorkerId id,
        WorkerRole role,
        String component,
        String endpoint,
        @Nullable ModelCard card,
        Instant firstSeen,
        Instant lastUpdated) {

    public DynamoWorker {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(component, "component");
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(firstSeen, "firstSeen");
        Objects.requireNonNull(lastUpdated, "lastUpdated");
    }

    public String namespace() {
        return id.namespace();
    }

    public long instanceId() {
        return id.instanceId();
    }

    /** The served model ({@code display_name}, else {@code name}), or null without a card. */
    public @Nullable String model() {
        return card == null ? null : card.model();
    }

    public ModelCard.WorkerCapacity capacity() {
        return card == null ? ModelCard.WorkerCapacity.UNKNOWN : card.capacity();
    }

    /** Whether everything but the two timestamps is equal: what decides if the fleet view changed. */
    public boolean sameViewAs(DynamoWorker other) {
        return id.equals(other.id) && role == other.role && component.equals(other.component)
                && endpoint.equals(other.endpoint) && Objects.equals(card, other.card);
    }
}
