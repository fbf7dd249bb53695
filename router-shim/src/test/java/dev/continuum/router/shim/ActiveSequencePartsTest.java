package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The two structures behind the active sequences: the lock-free ring and the block reference counts. */
class ActiveSequencePartsTest {
    @Test
    void refCountsAgreeWithAHashMapOnRandomRetainsAndReleases() {
        BlockRefCounts refs = new BlockRefCounts();
        Map<Long, Integer> reference = new HashMap<>();
        Random random = new Random(29);
        List<Long> held = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            // Few distinct hashes (collisions and long probe runs), some of them near each other's slots.
            long h = random.nextInt(3_000) * (random.nextBoolean() ? 1L : 0x1_0000_0000L);
            if (held.isEmpty() || random.nextInt(100) < 55) {
                boolean fresh = !reference.containsKey(h);
                assertThat(refs.retain(h)).isEqualTo(fresh);
                reference.merge(h, 1, Integer::sum);
                held.add(h);
            } else {
                long r = held.remove(random.nextInt(held.size()));
                int left = reference.merge(r, -1, Integer::sum);
                if (left == 0) {
                    reference.remove(r);
                }
                assertThat(refs.release(r)).isEqualTo(left == 0);
            }
            assertThat(refs.size()).isEqualTo(reference.size());
        }
        for (long h : held) {
            refs.release(h);
        }
        assertThat(refs.size()).isZero();
        assertThat(refs.release(42)).isFalse();
    }

    @Test
    @Timeout(60)
    void theRingHandsEveryOfferToExactlyOnePollerUnderContention() throws Exception {
        BoundedRing<Integer> ring = new BoundedRing<>(64);
        int producers = 3;
        int each = 50_000;
        ConcurrentHashMap<Integer, Boolean> seen = new ConcurrentHashMap<>();
        CyclicBarrier go = new CyclicBarrier(producers + 1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int base = p * each;
            Thread t = new Thread(() -> {
                try {
                    go.await(10, TimeUnit.SECONDS);
                    for (int i = 0; i < each; i++) {
                        while (!ring.offer(base + i)) {
                            Thread.onSpinWait(); // full: the test's consumer catches up
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        go.await(10, TimeUnit.SECONDS);
        int got = 0;
        while (got < producers * each) {
            Integer v = ring.poll();
            if (v != null) {
                assertThat(seen.put(v, Boolean.TRUE)).isNull();
                got++;
            }
        }
        for (Thread t : threads) {
            t.join();
        }
        assertThat(ring.poll()).isNull();
        assertThat(seen).hasSize(producers * each);
    }

    @Test
    void aFullRingRefusesAndAnEmptyOneAnswersNull() {
        BoundedRing<String> ring = new BoundedRing<>(2);
        assertThat(ring.poll()).isNull();
        assertThat(ring.offer("a")).isTrue();
        assertThat(ring.offer("b")).isTrue();
        assertThat(ring.offer("c")).isFalse();
        assertThat(ring.size()).isEqualTo(2);
        assertThat(ring.poll()).isEqualTo("a");
        assertThat(ring.offer("c")).isTrue();
        assertThat(ring.poll()).isEqualTo("b");
        assertThat(ring.poll()).isEqualTo("c");
    }
}
