package dev.continuum.router.core.config;

import org.jspecify.annotations.Nullable;

/**
 * {@code consistent_hash}: the {@code ConsistentHash} strategy's key and bounds. Requests with the same key go
 * to the same backend while that backend is under its load bound, which keeps a conversation's prefix on one
 * backend's cache without KV events.
 *
 * @param key          where the key is read: {@code header} (the header named by {@code header}) or
 *                     {@code first_user_message} (the first {@code user} message's content)
 * @param header       the header for {@code key: header}; null otherwise
 * @param loadFactor   bounded load: a backend takes a key only while its in-flight requests are at most
 *                     {@code ceil(load_factor * (in_flight + 1) / backends)}; over it the key walks the ring on
 * @param virtualNodes ring points per unit of weight; more points spread keys more evenly
 */
public record ConsistentHashConfig(Key key, @Nullable String header, double loadFactor, int virtualNodes) {

    /** Where the hash key comes from. */
    public enum Key {
        HEADER,
        FIRST_USER_MESSAGE;

        @com.fasterxml.jackson.annotation.JsonValue
        public String yamlName() {
            return this == HEADER ? "header" : "first_user_message";
        }
    }

    public static ConsistentHashConfig defaults() {
        return new ConsistentHashConfig(Key.FIRST_USER_MESSAGE, null, 1.25, 100);
    }
}
