package dev.continuum.router.sim;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The frontend's {@link DirectFrontend.Engine} over a fleet's workers: a request takes a place on its decode
 * worker (and prefill worker, when pinned) at once; its first token waits for both, later ones for the decode
 * worker only, because the prefill worker lets go of a request at its first token. With prefix caches
 * ({@link KvServing}), the first token also waits for the computing worker's simulated prefill.
 */
final class FleetEngine implements DirectFrontend.Engine {
    private static final CompletableFuture<Void> NO_GATE = CompletableFuture.completedFuture(null);

    private final Map<Long, SimWorker> byId;
    private final @Nullable KvServing kv;

    /** @param kv the KV serving path, or null when the workers keep no prefix caches */
    FleetEngine(List<SimWorker> workers, @Nullable KvServing kv) {
        this.byId = workers.stream().collect(Collectors.toUnmodifiableMap(SimWorker::instanceId,
                Function.identity()));
        this.kv = kv;
    }

    @Override
    public DirectFrontend.Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank,
            int promptTokens) {
        return accept(decode, decodeRank, prefill, prefillRank, promptTokens, null);
    }

    @Override
    public DirectFrontend.Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank,
            int promptTokens, @Nullable String body) {
        return accept(decode, decodeRank, prefill, prefillRank, promptTokens, body, -1);
    }

    @Override
    public DirectFrontend.Ticket accept(long decode, int decodeRank, @Nullable Long prefill, int prefillRank,
            int promptTokens, @Nullable String body, long decisionId) {
        SimWorker d = byId.get(decode);
        SimWorker p = prefill == null ? null : byId.get(prefill);
        if (d == null) {
            // Not one of ours (the frontend's workers were replaced): served without load.
            return DirectFrontend.immediate(DirectFrontend.InFlight.NONE).accept(decode, decodeRank, prefill,
                    prefillRank, promptTokens);
        }
        // The worker that computes the prompt (the prefill worker when pinned) caches it and paces the first token.
        SimWorker computing = p == null ? d : p;
        WorkerKv cache = computing.kv();
        boolean hashed = kv != null && cache != null && body != null;
        WorkerLoad.Request dr = d.load().accept(decodeRank, promptTokens, hashed);
        WorkerLoad.Request pr = p == null ? null : p.load().accept(prefillRank, promptTokens, hashed);
        CompletableFuture<Void> firstToken = kv == null || cache == null || body == null ? NO_GATE
                : kv.serve(cache, pr == null ? dr.rank() : pr.rank(), body, decisionId, (hashes, tokens) -> {
                    d.load().hashed(dr, hashes, tokens);
                    if (p != null && pr != null) {
                        p.load().hashed(pr, hashes, tokens);
                    }
                });
        return new PairTicket(d.load(), dr, p == null ? null : p.load(), pr, firstToken);
    }

    /** Called on the frontend's event loop only, except for the steps the loads run. */
    private static final class PairTicket implements DirectFrontend.Ticket {
        private final WorkerLoad decode;
        private final WorkerLoad.Request decodeRequest;
        private final @Nullable WorkerLoad prefill;
        private final WorkerLoad.@Nullable Request prefillRequest;
        private final CompletableFuture<Void> firstToken;
        private volatile boolean prefilled;
        private volatile boolean started;

        PairTicket(WorkerLoad decode, WorkerLoad.Request decodeRequest, @Nullable WorkerLoad prefill,
                WorkerLoad.@Nullable Request prefillRequest, CompletableFuture<Void> firstToken) {
            this.decode = decode;
            this.decodeRequest = decodeRequest;
            this.prefill = prefill;
            this.prefillRequest = prefillRequest;
            this.prefilled = prefill == null;
            this.firstToken = firstToken;
        }

        @Override
        public void next(Runnable step) {
            if (!started) {
                // The first token also waits for the simulated prefill (done at once without a prefix cache).
                started = true;
                firstToken.thenRun(() -> admitted(step));
            } else {
                admitted(step);
            }
        }

        private void admitted(Runnable step) {
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
