package dev.continuum.router.eventbus.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;
import java.util.Optional;

/** What a {@code brokers[]} entry may do: relay advertised publishers, or push announced KV sources. */
public enum BusRole {
    BROKER("broker"),
    KV_LISTENER("kv_listener");

    private final String label;

    BusRole(String label) {
        this.label = label;
    }

    /** The spelling in YAML and in {@code hello.role}. */
    @JsonValue
    public String label() {
        return label;
    }

    public static Optional<BusRole> fromLabel(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        for (BusRole role : values()) {
            if (role.label.equals(lower)) {
                return Optional.of(role);
            }
        }
        return Optional.empty();
    }
}
