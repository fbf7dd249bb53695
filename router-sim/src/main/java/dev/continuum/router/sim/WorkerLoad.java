package dev.continuum.router.sim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The request-driven load of one simulated worker, per data-parallel rank: each rank runs at most {@code slots}
 * requests at once (an engine's {@code max_num_seqs}); later ones wait in its queue, first come first served. A
 * running request holds {@code ceil((prompt + generated) / blockSize)} KV blocks, which grow as it generates and
 * are freed when it ends; a queued one holds none. A stalled worker admits and runs nothing: every request's next
 * step is parked until {@link #resume}.
 *
 * <p>Thread-safe (one lock). Steps are always run outside the lock: they re-enter the frontend.
 */
final class WorkerLoad {
    /** One request on this worker. */
    final class Request {
        private final int rank;
        /** The frontend's estimate, then the tokenized count once the KV side tells it ({@link #hashed}). */
        private int promptTokens;
        private int generated;
        private boolean admitted;
        private boolean ended;
        private @Nullable Runnable parked;
        /** The prompt's full blocks by sequence hash, once the KV side tokenized it (null: counted one per block). */
        private long @Nullable [] blockHashes;
        /** The KV side will tell the hashes: until then the prompt holds no blocks (the engine has not scheduled it). */
        private boolean hashesPending;

        private Request(int rank, int promptTokens) {
            this.rank = rank;
            this.promptTokens = promptTokens;
        }

        int rank() {
            return rank;
        }

        private long blocks() {
            return (promptTokens + (long) generated + blockSize - 1) / blockSize;
        }
    }

    private final int slots;
    private final int blockSize;
    private final long capacity;
    private final List<Set<Request>> running = new ArrayList<>();
    private final List<ArrayDeque<Request>> waiting = new ArrayList<>();
    private boolean stalled;

    /**
     * @param capacity KV blocks of one rank ({@code total_kv_blocks}): the published occupancy never exceeds it
     */
    WorkerLoad(int dpSize, int slots, int blockSize, long capacity) {
        this.slots = slots;
        this.blockSize = blockSize;
        this.capacity = capacity;
        for (int i = 0; i < dpSize; i++) {
            running.add(new LinkedHashSet<>());
            waiting.add(new ArrayDeque<>());
        }
    }

    int dpSize() {
        return running.size();
    }

    /** Takes a request on {@code rank}, or on the least busy rank when {@code rank} is negative or out of range. */
    synchronized Request accept(int rank, int promptTokens) {
        return accept(rank, promptTokens, false);
    }

    /**
     * As {@link #accept(int, int)}; with {@code hashesPending} the KV side tokenizes the prompt and tells its block
     * hashes ({@link #hashed}), and the prompt's blocks count from then, shared ones once.
     */
    synchronized Request accept(int rank, int promptTokens, boolean hashesPending) {
        int r = rank >= 0 && rank < running.size() ? rank : leastBusy();
        Request request = new Request(r, Math.max(1, promptTokens));
        request.hashesPending = hashesPending;
        if (running.get(r).size() < slots) {
            request.admitted = true;
            running.get(r).add(request);
        } else {
            waiting.get(r).add(request);
        }
        return request;
    }

    private int leastBusy() {
        int best = 0;
        for (int i = 1; i < running.size(); i++) {
            if (held(i) < held(best)) {
                best = i;
            }
        }
        return best;
    }

    private int held(int rank) {
        return running.get(rank).size() + waiting.get(rank).size();
    }

    /** Runs {@code step} now if the request runs and the worker is not stalled, else when that becomes true. */
    void next(Request request, Runnable step) {
        synchronized (this) {
            if (request.ended) {
                return;
            }
            if (!request.admitted || stalled) {
                request.parked = step;
                return;
            }
        }
        step.run();
    }

    /** One more generated token: the request's KV grows. */
    synchronized void token(Request request) {
        if (!request.ended) {
            request.generated++;
        }
    }

    /** The request ended (answered, or its client went away); admits the next queued one. Idempotent. */
    void end(Request request) {
        Runnable resumed = null;
        synchronized (this) {
            if (request.ended) {
                return;
            }
            request.ended = true;
            request.parked = null;
            if (!running.get(request.rank).remove(request)) {
                waiting.get(request.rank).remove(request);
                return;
            }
            Request next = waiting.get(request.rank).poll();
            if (next != null) {
                next.admitted = true;
                running.get(request.rank).add(next);
                if (!stalled) {
                    resumed = next.parked;
                    next.parked = null;
                }
            }
        }
        if (resumed != null) {
            resumed.run();
        }
    }

    synchronized void stall() {
        stalled = true;
    }

    /** Ends a stall: every running request's parked step runs. */
    void resume() {
        List<Runnable> steps = new ArrayList<>();
        synchronized (this) {
            stalled = false;
            for (Set<Request> rank : running) {
                for (Request r : rank) {
                    if (r.parked != null) {
                        steps.add(r.parked);
                        r.parked = null;
                    }
                }
            }
        }
        steps.forEach(Runnable::run);
    }

    synchronized boolean stalled() {
        return stalled;
    }

    /** Requests held: running and queued, on every rank. */
    synchronized int held() {
        int n = 0;
        for (int i = 0; i < running.size(); i++) {
            n += held(i);
        }
        return n;
    }

    synchronized int running() {
        return running.stream().mapToInt(Set::size).sum();
    }

    synchronized int queued() {
        return waiting.stream().mapToInt(ArrayDeque::size).sum();
    }

    /**
     * The prompt of {@code request} has {@code promptTokens} tokens and these full blocks (by sequence hash), which
     * it shares with its peers.
     */
    synchronized void hashed(Request request, long[] seqHashes, int promptTokens) {
        request.blockHashes = seqHashes;
        request.promptTokens = Math.max(1, promptTokens);
    }

    /**
     * KV blocks in use on {@code rank}: the running requests' prompt and generated tokens, capped at capacity. A
     * prompt block that several running requests share (same sequence hash) is in use once, as a prefix-caching
     * engine (vLLM's block pool) counts it in {@code kv_used_blocks}.
     */
    synchronized long kvUsedBlocks(int rank) {
        long sum = 0;
        Set<Long> shared = null;
        for (Request r : running.get(rank)) {
            long[] hashes = r.blockHashes;
            if (hashes == null) {
                sum += r.hashesPending ? 0 : r.blocks();
                continue;
            }
            if (shared == null) {
                shared = new HashSet<>();
            }
            for (long h : hashes) {
                shared.add(h);
            }
            sum += Math.max(0, r.blocks() - hashes.length); // the partial block and the generated tokens
        }
        return Math.min(capacity, sum + (shared == null ? 0 : shared.size()));
    }
}
