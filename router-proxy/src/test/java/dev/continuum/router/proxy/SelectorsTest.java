package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The distribution properties of Random, LeastConnections, LeastLatency and bounded-load ConsistentHash. */
class SelectorsTest {

    @SuppressWarnings("DataFlowIssue")
    private static Backend backend(int index, String name) {
        BackendConfig c = new BackendConfig(name, BackendType.OPENAI, URI.create("http://" + name), List.of(),
                BackendRole.UNIFIED, 1, null, null, true, false);
        // The selectors only read the index, the weight and the in-flight and latency counters.
        return new Backend(index, c, new BackendResources(name, c.url(), null, null, null, null, null));
    }

    private static List<Backend> fleet(int n) {
        List<Backend> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            all.add(backend(i, "b" + i));
        }
        return all;
    }

    @Test
    void randomIsUniform() {
        List<Backend> all = fleet(3);
        Map<String, Integer> counts = new HashMap<>();
        RandomSelector s = new RandomSelector();
        for (int i = 0; i < 12_000; i++) {
            counts.merge(s.pick(all).name(), 1, Integer::sum);
        }
        // 4,000 expected each, standard deviation about 52: 600 off is more than 11 deviations.
        assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(3_400, 4_600));
    }

    @Test
    void leastConnectionsTakesTheLeastBusyAndSpreadsTies() {
        List<Backend> all = fleet(3);
        all.get(0).resources().inFlight.set(5);
        all.get(1).resources().inFlight.set(2);
        all.get(2).resources().inFlight.set(7);
        LeastConnectionsSelector s = new LeastConnectionsSelector();
        for (int i = 0; i < 6; i++) {
            assertThat(s.pick(all).name()).isEqualTo("b1");
        }
        all.forEach(b -> b.resources().inFlight.set(0));
        Set<String> idle = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            idle.add(s.pick(all).name());
        }
        assertThat(idle).containsExactlyInAnyOrder("b0", "b1", "b2");
    }

    @Test
    void leastLatencyMeasuresEveryBackendFirstThenTakesTheFastestAverage() {
        List<Backend> all = fleet(3);
        LeastLatencySelector s = new LeastLatencySelector();
        all.get(0).resources().recordLatency(50_000_000);
        all.get(2).resources().recordLatency(10_000_000);
        assertThat(s.pick(all).name()).as("b1 has no sample yet").isEqualTo("b1");
        all.get(1).resources().recordLatency(40_000_000);
        for (int i = 0; i < 5; i++) {
            assertThat(s.pick(all).name()).isEqualTo("b2");
        }
        // b2 slows down: its average climbs past b1's within a few samples, not at the first outlier.
        all.get(2).resources().recordLatency(90_000_000);
        assertThat(s.pick(all).name()).isEqualTo("b2");
        for (int i = 0; i < 6; i++) {
            all.get(2).resources().recordLatency(90_000_000);
        }
        assertThat(s.pick(all).name()).isEqualTo("b1");
    }

    @Test
    void consistentHashSticksAKeyToOneBackendAndMovesFewKeysWhenOneLeaves() {
        List<Backend> all = fleet(5);
        ConsistentHashSelector s = new ConsistentHashSelector(all, 1.25, 100);
        SplittableRandom r = new SplittableRandom(7);
        Map<Long, String> owner = new HashMap<>();
        Map<String, Integer> share = new HashMap<>();
        for (int i = 0; i < 5_000; i++) {
            long key = AffinityKeys.finish(r.nextLong());
            String first = s.pick(all, key).name();
            assertThat(s.pick(all, key).name()).as("same key, same backend").isEqualTo(first);
            owner.put(key, first);
            share.merge(first, 1, Integer::sum);
        }
        // 100 points per backend spread keys within a factor of about 1.5 of the mean (1,000).
        assertThat(share.values()).allSatisfy(c -> assertThat(c).isBetween(600, 1_500));
        List<Backend> without = new ArrayList<>(all);
        without.remove(2);
        int moved = 0;
        for (Map.Entry<Long, String> e : owner.entrySet()) {
            String now = s.pick(without, e.getKey()).name();
            if (!e.getValue().equals("b2") && !now.equals(e.getValue())) {
                moved++;
            }
        }
        assertThat(moved).as("keys of the remaining backends stay where they were").isZero();
    }

    @Test
    void consistentHashNeverPlacesARequestAboveTheLoadBound() {
        List<Backend> all = fleet(4);
        double c = 1.25;
        ConsistentHashSelector s = new ConsistentHashSelector(all, c, 100);
        long hot = AffinityKeys.finish(42); // one key for every request: the worst case for plain hashing
        int[] load = new int[all.size()];
        long total = 0;
        for (int i = 0; i < 400; i++) {
            Backend b = s.pick(all, hot);
            long bound = (long) Math.ceil(c * (total + 1) / all.size());
            assertThat(load[b.index()] + 1L).as("request %d on %s", i, b).isLessThanOrEqualTo(bound);
            load[b.index()]++;
            b.resources().inFlight.incrementAndGet();
            total++;
        }
        // The hot key fills its own backend up to the bound, then spills in ring order; all four take some.
        for (int l : load) {
            assertThat(l).isBetween(1, 125);
        }
        // Once load drains, the key is back on its own backend.
        all.forEach(b -> b.resources().inFlight.set(0));
        Backend home = s.pick(all, hot);
        assertThat(s.pick(all, hot)).isSameAs(home);
    }

    @Test
    void consistentHashSkipsBackendsThatAreNotCandidates() {
        List<Backend> all = fleet(3);
        ConsistentHashSelector s = new ConsistentHashSelector(all, 1.25, 50);
        List<Backend> only = List.of(all.get(1));
        assertThat(s.pick(only, AffinityKeys.finish(1))).isSameAs(all.get(1));
        List<Backend> two = List.of(all.get(0), all.get(2));
        for (long k = 1; k < 200; k++) {
            assertThat(s.pick(two, AffinityKeys.finish(k)).name()).isIn("b0", "b2");
        }
    }
}
