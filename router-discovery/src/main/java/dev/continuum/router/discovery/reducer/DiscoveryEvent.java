package dev.continuum.router.discovery.reducer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** What a discovery source feeds the reducer. Keys are full etcd keys ({@code v1/instances/dynamo/...}). */
public sealed interface DiscoveryEvent {

    /**
     * A key now holds {@code value}. The array is owned by the event and must not be modified after
     * construction (sources hand over freshly read bytes; copying 16 MiB values would double the peak).
     */
    record Put(String key, byte[] value) implements DiscoveryEvent {
        public Put {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(value, "value");
        }

        public static Put of(String key, String json) {
            return new Put(key, json.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Put p && key.equals(p.key) && Arrays.equals(value, p.value);
        }

        @Override
        public int hashCode() {
            return key.hashCode() * 31 + Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return "Put[" + key + ", " + value.length + " bytes]";
        }
    }

    /** A key was deleted (or its lease expired). */
    record Delete(String key) implements DiscoveryEvent {
        public Delete {
            Objects.requireNonNull(key, "key");
        }
    }

    /**
     * The complete state of every watched prefix at one point in time (a pass's range gets): every held key
     * that is not listed is dropped, listed ones are put. Unchanged records change nothing, so an idempotent
     * resync publishes nothing new.
     */
    record Resync(List<Put> records) implements DiscoveryEvent {
        public Resync {
            records = List.copyOf(records);
        }

        @Override
        public String toString() {
            return "Resync[" + records.size() + " records]";
        }
    }
}
