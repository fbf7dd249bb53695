package dev.continuum.router.load;

import dev.continuum.router.discovery.WorkerId;
import java.util.Objects;

/** The load store's key: one worker (namespace and instance ID) and one of its data-parallel ranks. */
public record SampleKey(WorkerId worker, long dpRank) {
    public SampleKey {
        Objects.requireNonNull(worker, "worker");
        if (dpRank < 0 || dpRank > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("dpRank: " + dpRank + " (expected: an unsigned 32-bit value)");
        }
    }

    @Override
    public String toString() {
        return worker + "#" + dpRank;
    }
}
