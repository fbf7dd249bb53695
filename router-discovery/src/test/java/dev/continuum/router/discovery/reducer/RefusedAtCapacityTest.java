package dev.continuum.router.discovery.reducer;

import static dev.continuum.router.testing.DynamoRecords.endpoint;
import static dev.continuum.router.testing.DynamoRecords.endpointKey;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.discovery.DiscoveryEventKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Keys refused at a keyspace's capacity are remembered (key only) and come back in arrival order. */
class RefusedAtCapacityTest {
    private static String key(long id) {
        return endpointKey("dynamo", "decode", "generate", id);
    }

    private static String value(long id) {
        return endpoint("dynamo", "decode", "generate", id);
    }

    /** Three hostile keys fill a three-key keyspace; 9 is refused, then 5 (arrival order, not key order). */
    private static ReducerHarness full() {
        ReducerHarness h = new ReducerHarness(new DiscoveryLimits(4096, 1024, 3));
        h.resync(key(1), value(1), key(2), value(2), key(3), value(3));
        h.put(key(9), value(9));
        h.put(key(5), value(5));
        return h;
    }

    @Test
    void refusedKeysBecomeAdmissibleOldestFirstAsRoomFrees() {
        ReducerHarness h = full();
        assertThat(h.reducer.admissible()).isEmpty();
        assertThat(h.count(DiscoveryEventKind.REFUSED)).isEqualTo(2);

        h.delete(key(1));
        assertThat(h.reducer.admissible()).containsExactly(key(9));
        h.put(key(9), value(9)); // what the watcher reads back
        assertThat(h.workers()).extracting(w -> w.instanceId()).containsExactly(2L, 3L, 9L);
        assertThat(h.reducer.admissible()).isEmpty();

        h.delete(key(2));
        h.delete(key(3));
        assertThat(h.reducer.admissible()).containsExactly(key(5));
        assertThat(h.count(DiscoveryEventKind.REFUSED)).as("each refusal counted once").isEqualTo(2);
    }

    @Test
    void aRefusedKeyThatIsPutAgainAtCapacityKeepsItsPlace() {
        ReducerHarness h = full();
        h.put(key(9), value(9).replace("decode", "decode")); // a keep-alive rewrite while still full
        h.delete(key(1));
        assertThat(h.reducer.admissible()).containsExactly(key(9));
        assertThat(h.count(DiscoveryEventKind.REFUSED)).isEqualTo(2);
    }

    @Test
    void aDeletedRefusedKeyIsForgottenAndDeletesOfUnheldKeysAreNotCounted() {
        ReducerHarness h = full();
        h.delete(key(9));           // refused, never held
        h.delete(key(77));          // never seen
        assertThat(h.count(DiscoveryEventKind.DELETE)).isZero();

        h.delete(key(1));
        assertThat(h.count(DiscoveryEventKind.DELETE)).isEqualTo(1);
        assertThat(h.reducer.admissible()).containsExactly(key(5));
    }

    @Test
    void aResyncAdmitsRefusedKeysInArrivalOrderBeforeOtherNewKeys() {
        ReducerHarness h = full();
        // The hostile keys 1 and 2 went away while disconnected; 4 is new and sorts before 5 and 9.
        h.resync(key(3), value(3), key(4), value(4), key(5), value(5), key(9), value(9));
        assertThat(h.workers()).extracting(w -> w.instanceId()).containsExactly(3L, 5L, 9L);
        assertThat(h.reducer.admissible()).isEmpty();
        h.delete(key(3));
        assertThat(h.reducer.admissible()).containsExactly(key(4));
    }

    @Test
    void theMemoryIsBoundedPerKeyspace() {
        RefusedKeys keys = new RefusedKeys(2);
        assertThat(keys.add(Keyspace.INSTANCES, "a")).isTrue();
        assertThat(keys.add(Keyspace.INSTANCES, "b")).isTrue();
        assertThat(keys.add(Keyspace.INSTANCES, "c")).isTrue();
        assertThat(keys.add(Keyspace.INSTANCES, "a")).isFalse();
        assertThat(keys.size(Keyspace.INSTANCES)).isEqualTo(2);
        assertThat(keys.add(Keyspace.MODEL_CARDS, "a")).isTrue();
        assertThat(keys.all(Keyspace.INSTANCES)).isEqualTo(List.of("a", "b"));
    }
}
