package dev.continuum.router.kv.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LongIntMapTest {
    @Test
    void behavesAsAHashMapUnderRandomChurn() {
        SplittableRandom r = new SplittableRandom(7);
        LongIntMap map = new LongIntMap();
        Map<Long, Integer> reference = new HashMap<>();
        for (int step = 0; step < 200_000; step++) {
            long key = r.nextInt(3) == 0 ? r.nextLong() : r.nextInt(2000) - 1000; // dense keys collide often
            switch (r.nextInt(3)) {
                case 0 -> {
                    int value = r.nextInt(1_000_000);
                    Integer before = reference.put(key, value);
                    assertThat(map.put(key, value)).isEqualTo(before == null ? LongIntMap.MISSING : before);
                }
                case 1 -> {
                    Integer before = reference.remove(key);
                    assertThat(map.remove(key)).isEqualTo(before == null ? LongIntMap.MISSING : before);
                }
                default -> {
                    Integer held = reference.get(key);
                    assertThat(map.get(key)).isEqualTo(held == null ? LongIntMap.MISSING : held);
                }
            }
            assertThat(map.size()).isEqualTo(reference.size());
        }
        Map<Long, Integer> seen = new HashMap<>();
        map.forEach((k, v) -> seen.put(k, v));
        assertThat(seen).isEqualTo(reference);
        // In sections of 7: every entry once, and the cursor ends at -1.
        Map<Long, Integer> sections = new HashMap<>();
        int calls = 0;
        for (int cursor = 0; cursor >= 0; calls++) {
            int before = sections.size();
            cursor = map.forEachFrom(cursor, 7, (k, v) -> assertThat(sections.put(k, v)).isNull());
            assertThat(sections.size() - before).isLessThanOrEqualTo(7);
        }
        assertThat(sections).isEqualTo(reference);
        assertThat(calls).isEqualTo((reference.size() + 6) / 7 + (reference.size() % 7 == 0 ? 1 : 0));
        map.clear();
        assertThat(map.size()).isZero();
        assertThat(map.capacity()).isEqualTo(16);
    }
}
