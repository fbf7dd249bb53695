package dev.continuum.router.shim;

import java.util.Objects;

/**
 * The handle of a tracked dispatch: the pooled {@link Sequence} and the stamp of this use of it (24 bytes, less
 * than the ledger's own record, so tracking adds no allocation to a pick). First-token and end calls after the
 * sequence moved on to another use find another stamp and do nothing.
 */
final class TrackedDispatch implements Selection.Dispatch {
    private final Sequence sequence;
    private final int stamp;

    TrackedDispatch(Sequence sequence, int stamp) {
        this.sequence = sequence;
        this.stamp = stamp;
    }

    @Override
    public void ended() {
        ended(SequenceEnd.COMPLETED);
    }

    @Override
    public void ended(SequenceEnd reason) {
        ActiveSequences owner = sequence.owner;
        owner.end(sequence, stamp, Objects.requireNonNull(reason, "reason"), owner.now());
    }

    @Override
    public void firstToken() {
        ActiveSequences owner = sequence.owner;
        owner.firstToken(sequence, stamp, owner.now());
    }
}
