package dev.continuum.router.kv.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SegmentCacheTest {
    private static SegmentCache.Key key(long i) {
        return new SegmentCache.Key(i, ~i);
    }

    @Test
    void aStreamOfUniqueSegmentsNeverHoldsMoreThanTheBound() {
        AtomicLong evicted = new AtomicLong();
        long bound = 100_000;
        SegmentCache cache = new SegmentCache(bound, evicted::addAndGet);
        for (int i = 0; i < 20_000; i++) {
            cache.put(key(i), new int[1 + i % 200]);
            assertThat(cache.bytes()).isLessThanOrEqualTo(bound);
        }
        assertThat(evicted.get()).isPositive();
        assertThat(cache.size()).isPositive();
        assertThat(cache.get(key(19_999))).as("the newest entry is kept").isNotNull();
    }

    @Test
    void evictsTheLeastRecentlyUsedFirst() {
        int entryBytes = 4 * 100 + SegmentCache.ENTRY_OVERHEAD;
        SegmentCache cache = new SegmentCache(10L * entryBytes, SegmentCache.Listener.NONE);
        for (int i = 0; i < 10; i++) {
            assertThat(cache.put(key(i), new int[100])).isTrue();
        }
        assertThat(cache.get(key(0))).isNotNull(); // 0 is now the most recently used
        cache.put(key(10), new int[100]); // over the bound: the oldest quarter and more goes
        assertThat(cache.get(key(0))).isNotNull();
        assertThat(cache.get(key(1))).isNull();
        assertThat(cache.get(key(10))).isNotNull();
        assertThat(cache.bytes()).isLessThanOrEqualTo(10L * entryBytes);
    }

    @Test
    void anEntryOverAQuarterOfTheBoundIsNotCached() {
        SegmentCache cache = new SegmentCache(4_000, SegmentCache.Listener.NONE);
        assertThat(cache.put(key(1), new int[300])).isFalse();
        assertThat(cache.bytes()).isZero();
    }

    @Test
    void shrinkingEvictsAtOnceAndZeroTurnsTheCacheOff() {
        SegmentCache cache = new SegmentCache(1 << 20, SegmentCache.Listener.NONE);
        for (int i = 0; i < 100; i++) {
            cache.put(key(i), new int[100]);
        }
        cache.resize(10_000);
        assertThat(cache.bytes()).isLessThanOrEqualTo(10_000);
        cache.resize(0);
        assertThat(cache.enabled()).isFalse();
        assertThat(cache.bytes()).isZero();
        assertThat(cache.put(key(1), new int[1])).isFalse();
    }
}
