package dev.continuum.router.kv.index;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.jspecify.annotations.Nullable;

/**
 * The samples the picker's overlay walk already chained, handed to the replica-sync sender so a prompt is chained
 * once per dispatch, not twice (docs/replicas.md, "Approximate mode"). While peers' samples are held, a lookup
 * chains the whole prompt from {@link SampledChain}'s fixed root to probe them ({@link PredictionReader}): the same
 * keys a sample of that prompt carries. The walk leaves the keys at the sample's positions here under the prompt's
 * hashes array; the sequence drainer takes them for the same dispatch ({@link #take}) and chains only on a miss.
 *
 * <p>Fixed slots chosen by the prompt's last hash and length, matched by the array's identity (a prompt's hashes are
 * never modified, so the same array means the same keys). Each slot is guarded by a flag both sides only try: nobody
 * waits, and a busy, overwritten or colliding slot is a miss. Between a lookup and the drain that takes its keys lie
 * the lookups of at most a few dozen requests (the drainer runs every 64 queued entries, at least every 10 ms), so
 * with {@value #SLOTS} slots a few percent of takes miss. Allocation-free for the picker; a slot holds its array
 * until taken or overwritten, so at most {@value #SLOTS} prompts' hashes are kept alive by it.
 */
public final class SampleMemo {
    static final int SLOTS = 256;

    private final AtomicIntegerArray busy = new AtomicIntegerArray(SLOTS);
    // Guarded by busy: written and read only by the thread that set a slot's flag.
    private final long[][] prompt = new long[SLOTS][];
    private final long[] keys = new long[SLOTS * SampledChain.MAX_KEYS];
    private final int[] count = new int[SLOTS];

    /** Keeps the first {@code n} of {@code sampled} as the sample of {@code hashes}; skipped if the slot is busy. */
    public void put(long[] hashes, long[] sampled, int n) {
        if (n <= 0 || n > SampledChain.MAX_KEYS || hashes.length == 0) {
            return;
        }
        int s = slot(hashes);
        if (!busy.compareAndSet(s, 0, 1)) {
            return;
        }
        prompt[s] = hashes;
        System.arraycopy(sampled, 0, keys, s * SampledChain.MAX_KEYS, n);
        count[s] = n;
        busy.set(s, 0);
    }

    /** The sample's keys kept for this very array (then forgotten), or null: the caller chains it itself. */
    public long @Nullable [] take(long[] hashes) {
        if (hashes.length == 0) {
            return null;
        }
        int s = slot(hashes);
        if (!busy.compareAndSet(s, 0, 1)) {
            return null;
        }
        long[] out = null;
        if (prompt[s] == hashes) {
            out = new long[count[s]];
            System.arraycopy(keys, s * SampledChain.MAX_KEYS, out, 0, out.length);
            prompt[s] = null;
        }
        busy.set(s, 0);
        return out;
    }

    private static int slot(long[] hashes) {
        long h = (hashes[hashes.length - 1] ^ hashes.length) * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & (SLOTS - 1);
    }
}
