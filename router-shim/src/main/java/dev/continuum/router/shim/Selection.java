package dev.continuum.router.shim;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A picker's answer for one request: the decode pin, and the prefill pin when the pair is disaggregated.
 *
 * @param decode         the decode (or aggregated) worker rank; always present
 * @param prefill        the prefill worker rank, or null (aggregated winner, or no prefill worker in the
 *                       winner's namespace: {@link SelectionReason#NO_PREFILL_POOL})
 * @param decodeReason   why the decode pin won
 * @param prefillReason  why the prefill pin won, or {@link SelectionReason#NO_PREFILL_POOL}
 * @param dispatch       tell it the first token and when the request ended: its active sequence stops counting
 *                       and a stall is not blamed on the worker
 */
public record Selection(
        WorkerPin decode,
        @Nullable WorkerPin prefill,
        SelectionReason decodeReason,
        SelectionReason prefillReason,
        Dispatch dispatch) {

    public Selection {
        Objects.requireNonNull(decode, "decode");
        Objects.requireNonNull(decodeReason, "decodeReason");
        Objects.requireNonNull(prefillReason, "prefillReason");
        Objects.requireNonNull(dispatch, "dispatch");
    }

    /** The namespace both pins belong to (pairs never cross namespaces). */
    public String namespace() {
        return decode.worker().namespace();
    }

    /**
     * The unanswered dispatches a selection recorded. {@link #ended()} must be called once the request has
     * ended without reaching the engine or after it (refused, failed, cancelled, or completed): an ended
     * request no longer marks its workers as possibly stalled. Idempotent.
     */
    public interface Dispatch {
        Dispatch NONE = () -> { };

        void ended();

        /** As {@link #ended()}, saying why (what active-sequence listeners are told). */
        default void ended(SequenceEnd reason) {
            ended();
        }

        /**
         * The first response bytes came back through the shim: the request's prefill is over, so its uncached
         * prompt tokens stop counting on the rank that prefilled it. Idempotent; ignored after the end.
         */
        default void firstToken() {
        }
    }
}
