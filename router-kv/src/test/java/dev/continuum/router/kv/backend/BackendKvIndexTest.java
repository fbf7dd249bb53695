package dev.continuum.router.kv.backend;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The inverted view answers what the per-backend sets answer, through stores, removals and clears. */
class BackendKvIndexTest {
    @Test
    void prefixDepthsAgreeWithEachBackendsOverlap() {
        SplittableRandom random = new SplittableRandom(2031);
        BackendKvIndex index = new BackendKvIndex();
        long[] prompt = new long[40];
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = random.nextLong();
        }
        int[] depths = new int[BackendKvIndex.MAX_SLOTS];
        for (int round = 0; round < 2000; round++) {
            String backend = "b" + random.nextInt(70); // more than one word of slots
            switch (random.nextInt(6)) {
                case 0, 1, 2 -> {
                    int from = random.nextInt(prompt.length);
                    int to = Math.min(prompt.length, from + 1 + random.nextInt(12));
                    index.store(backend, java.util.Arrays.copyOfRange(prompt, from, to), 10_000);
                }
                case 3 -> index.store(backend, new long[] {random.nextLong()}, 10_000);
                case 4 -> index.remove(backend, new long[] {prompt[random.nextInt(prompt.length)]});
                default -> {
                    if (random.nextInt(10) == 0) {
                        index.clear(backend);
                    }
                }
            }
            index.prefixDepths(BackendKvIndex.keys(prompt), depths);
            for (int b = 0; b < 70; b++) {
                String name = "b" + b;
                int slot = index.slot(name);
                int expected = index.overlap(name, prompt);
                assertThat(slot < 0 ? 0 : depths[slot]).as("%s after round %d", name, round).isEqualTo(expected);
            }
        }
    }
}
