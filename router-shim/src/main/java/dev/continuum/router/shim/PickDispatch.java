package dev.continuum.router.shim;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The dispatch record of one pick: the open-request counters of the buckets its decode and prefill
 * dispatches joined (null where the dispatch cannot mark a stall). Ending it once releases both; one object
 * per pick, with its ended flag as a field rather than an atomic of its own.
 */
final class PickDispatch implements Selection.Dispatch {
    private static final AtomicIntegerFieldUpdater<PickDispatch> ENDED =
            AtomicIntegerFieldUpdater.newUpdater(PickDispatch.class, "ended");

    private final @Nullable AtomicInteger decodeOpen;
    private final @Nullable AtomicInteger prefillOpen;
    private volatile int ended;

    PickDispatch(@Nullable AtomicInteger decodeOpen, @Nullable AtomicInteger prefillOpen) {
        this.decodeOpen = decodeOpen;
        this.prefillOpen = prefillOpen;
    }

    @Override
    public void ended() {
        if (ENDED.compareAndSet(this, 0, 1)) {
            if (decodeOpen != null) {
                decodeOpen.decrementAndGet();
            }
            if (prefillOpen != null) {
                prefillOpen.decrementAndGet();
            }
        }
    }
}
