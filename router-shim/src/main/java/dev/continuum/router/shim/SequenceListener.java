package dev.continuum.router.shim;

/**
 * Told what happens to the requests the router dispatches: the seam through which another module follows the
 * active sequences (replica sync publishes them, a predicted cache may use the dispatches). Register with
 * {@link ActiveSequences#listen}.
 *
 * <p>Calls come from the sequence drainer: the picker upkeep thread, or a picking thread that helps drain a
 * long queue, so an implementation must not block (hand the event to its own queue). For one sequence the
 * calls come in order: {@link #dispatched}, then at most one {@link #firstToken}, then one {@link #ended}. A
 * sequence that was not tracked (the bound of {@link ActiveSequences#MAX_SEQUENCES} reached) is not told.
 */
public interface SequenceListener {
    /** A request was dispatched and now counts on its ranks. */
    default void dispatched(DispatchedSequence sequence) {
    }

    /** The first response bytes of sequence {@code id} came back: its prefill is over. */
    default void firstToken(long id) {
    }

    /** Sequence {@code id} no longer counts, for {@code reason}. */
    default void ended(long id, SequenceEnd reason) {
    }
}
