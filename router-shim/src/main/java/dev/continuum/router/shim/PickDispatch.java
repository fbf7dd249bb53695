package dev.continuum.router.shim;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;

/**
 * The dispatch record of one pick: the rank ledgers and bucket tickets its decode and prefill dispatches
 * joined, where the dispatch can mark a stall. Ending it once releases both. 32 bytes: the tickets are held
 * as the 32-bit stamps their slots carry, and the ended flag is a field rather than an atomic of its own.
 */
final class PickDispatch implements Selection.Dispatch {
    private static final AtomicIntegerFieldUpdater<PickDispatch> ENDED =
            AtomicIntegerFieldUpdater.newUpdater(PickDispatch.class, "ended");

    private final @Nullable RankLedger decode;
    private final @Nullable RankLedger prefill;
    private final int decodeTicket;
    private final int prefillTicket;
    private volatile int ended;

    private PickDispatch(@Nullable RankLedger decode, int decodeTicket, @Nullable RankLedger prefill,
            int prefillTicket) {
        this.decode = decode;
        this.decodeTicket = decodeTicket;
        this.prefill = prefill;
        this.prefillTicket = prefillTicket;
    }

    /**
     * The record of a decode and a prefill dispatch ({@link RankLedger#add}'s tickets, {@link
     * RankLedger#NO_COUNTER} where there is none); {@link Selection.Dispatch#NONE} when neither can mark a stall.
     */
    static Selection.Dispatch of(@Nullable RankLedger decode, long decodeTicket, @Nullable RankLedger prefill,
            long prefillTicket) {
        boolean d = decode != null && decodeTicket != RankLedger.NO_COUNTER;
        boolean p = prefill != null && prefillTicket != RankLedger.NO_COUNTER;
        if (!d && !p) {
            return Selection.Dispatch.NONE;
        }
        return new PickDispatch(d ? decode : null, (int) decodeTicket, p ? prefill : null, (int) prefillTicket);
    }

    @Override
    public void ended() {
        if (ENDED.compareAndSet(this, 0, 1)) {
            if (decode != null) {
                decode.end(decodeTicket);
            }
            if (prefill != null) {
                prefill.end(prefillTicket);
            }
        }
    }
}
