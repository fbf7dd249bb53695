package dev.continuum.router.sim;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The frontend's {@link DirectFrontend.Engine} over a fleet's workers: a request takes a place on its decode
 * worker (and prefill worker, when pinned) at once; its first token waits for both, later ones for the decode
 * worker only, because the prefill worker lets go of a request at its first token.
 */
final class FleetEngine implements DirectFrontend.Engine {
    private final Map<Long, SimWorker> byId;

    FleetEngine(List<SimWorker> workers) {
        this.byId = workers.stream().collect(Collectors.toUnmodifiableMap(SimWorker::instanceId,
                Function.identity()));
    }

    @Override
    public DirectFrontend.Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank,
            int promptTokens) {
        SimWorker d = byId.get(decode);
        SimWorker p = prefill == null ? null : byId.get(prefill);
        if (d == null) {
            // Not one of ours (the frontend's workers were replaced): served without load.
            return DirectFrontend.immediate(DirectFrontend.InFlight.NONE).accept(decode, decodeRank, prefill,
                    prefillRank, promptTokens);
        }
        WorkerLoad.Request dr = d.load().accept(decodeRank, promptTokens);
        WorkerLoad.Request pr = p == null ? null : p.load().accept(prefillRank, promptTokens);
        return new PairTicket(d.load(), dr, p == null ? null : p.load(), pr);
    }

    /** Called on the frontend's event loop only, except for the steps the loads run. */
    private static final class PairTicket implements DirectFrontend.Ticket {
        private final WorkerLoad decode;
        private final WorkerLoad.Request decodeRequest;
        private final @Nullable WorkerLoad prefill;
        private final WorkerLoad.@Nullable Request prefillRequest;
        private volatile boolean prefilled;

        PairTicket(WorkerLoad decode, WorkerLoad.Request decodeRequest, @Nullable WorkerLoad prefill,
                WorkerLoad.@Nullable Request prefillRequest) {
            this.decode = decode;
            this.decodeRequest = decodeRequest;
            this.prefill = prefill;
            this.prefillRequest = prefillRequest;
            this.prefilled = prefill == null;
        }

        @Override
        public void next(Runnable step) {
            if (prefilled || prefill == null || prefillRequest == null) {
                decode.next(decodeRequest, step);
            } else {
                prefill.next(prefillRequest, () -> decode.next(decodeRequest, step));
            }
        }

        @Override
        public void token() {
            endPrefill();
            decode.token(decodeRequest);
        }

        @Override
        public void end() {
            endPrefill();
            decode.end(decodeRequest);
        }

        private void endPrefill() {
            if (!prefilled && prefill != null && prefillRequest != null) {
                prefilled = true;
                prefill.end(prefillRequest);
            }
        }
    }
}
