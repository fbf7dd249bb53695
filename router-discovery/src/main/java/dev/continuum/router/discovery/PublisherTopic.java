package dev.continuum.router.discovery;

import java.util.Optional;

/** The event-channel topics the router subscribes to; every other topic is skipped silently. */
public enum PublisherTopic {
    /** Per-worker {@code ActiveLoad} samples (the load signal). */
    KV_METRICS("kv_metrics"),
    /** KV-cache block events (stored, removed, cleared) for KV-aware routing. */
    KV_EVENTS("kv-events");

    private final String wireName;

    PublisherTopic(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static Optional<PublisherTopic> fromWire(String topic) {
        for (PublisherTopic t : values()) {
            if (t.wireName.equals(topic)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
