package dev.continuum.router.sim;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The KV occupancy a simulated worker publishes as {@code kv_used_blocks}. */
class WorkerLoadTest {
    private static final int BS = 16;

    @Test
    void promptBlocksSharedByRunningRequestsAreInUseOnce() {
        WorkerLoad load = new WorkerLoad(1, 8, BS, 1_000_000);
        // 10 full blocks and a partial one each; the first 8 blocks shared.
        WorkerLoad.Request a = load.accept(0, 10 * BS + 3);
        WorkerLoad.Request b = load.accept(0, 10 * BS + 3);
        assertThat(load.kvUsedBlocks(0)).as("before tokenizing: one per block").isEqualTo(22);

        load.hashed(a, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10 * BS + 3);
        load.hashed(b, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 19, 20}, 10 * BS + 3);
        // 12 distinct full blocks, and each request's own partial block.
        assertThat(load.kvUsedBlocks(0)).isEqualTo(12 + 2);
    }

    @Test
    void aPromptTheKvSideWillHashHoldsNoBlocksUntilItIsHashed() {
        WorkerLoad load = new WorkerLoad(1, 8, BS, 1_000_000);
        WorkerLoad.Request a = load.accept(0, 25 * BS, true); // the frontend's estimate, above the truth
        assertThat(load.kvUsedBlocks(0)).as("not scheduled yet").isZero();
        load.hashed(a, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10 * BS);
        assertThat(load.kvUsedBlocks(0)).as("the tokenized prompt's blocks").isEqualTo(10);
    }

    @Test
    void theCapacityStillCapsTheCount() {
        WorkerLoad load = new WorkerLoad(1, 8, BS, 5);
        WorkerLoad.Request a = load.accept(0, 10 * BS);
        load.hashed(a, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10 * BS);
        assertThat(load.kvUsedBlocks(0)).isEqualTo(5);
    }
}
