package dev.continuum.router.discovery.reducer;

import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.PublisherTopic;
import dev.continuum.router.discovery.WorkerId;
import org.jspecify.annotations.Nullable;

/**
 * A parsed record the reducer holds under its etcd key. Records are compared with {@code equals} so that a
 * put of an unchanged value (every record of an idempotent resync) changes nothing.
 */
sealed interface HeldRecord {
    Keyspace keyspace();

    /** {@code type: Endpoint} under {@code v1/instances/}. Only {@code generate} endpoints make workers. */
    record EndpointRecord(WorkerId id, String component, String endpoint) implements HeldRecord {
        static final String GENERATE = "generate";

        @Override
        public Keyspace keyspace() {
            return Keyspace.INSTANCES;
        }

        boolean isGenerate() {
            return GENERATE.equals(endpoint);
        }
    }

    /**
     * {@code type: Model} under {@code v1/mdc/}. A card with empty component and endpoint is a legacy card
     * that joins on instance ID alone; a card with a model suffix (a LoRA adapter) never joins.
     */
    record CardRecord(WorkerId id, String component, String endpoint, @Nullable String modelSuffix, ModelCard card)
            implements HeldRecord {
        @Override
        public Keyspace keyspace() {
            return Keyspace.MODEL_CARDS;
        }

        boolean joins() {
            return modelSuffix == null || modelSuffix.isEmpty();
        }

        CardIdentity identity() {
            return new CardIdentity(id, component, endpoint);
        }
    }

    /**
     * {@code type: EventChannel} under {@code v1/event_channels/namespace/<ns>/}.
     *
     * @param topic     null for a topic the router does not use (skipped silently)
     * @param publisher the subscription target, or null when the channel is unsupported
     */
    record ChannelRecord(PublisherId id, @Nullable PublisherTopic topic, @Nullable DynamoPublisher publisher)
            implements HeldRecord {
        @Override
        public Keyspace keyspace() {
            return Keyspace.EVENT_CHANNELS;
        }
    }

    /** The identity a base card is registered under; legacy cards have empty component and endpoint. */
    record CardIdentity(WorkerId worker, String component, String endpoint) {
        static CardIdentity legacy(WorkerId worker) {
            return new CardIdentity(worker, "", "");
        }

        @Override
        public String toString() {
            return worker + "/" + component + "/" + endpoint;
        }
    }
}
