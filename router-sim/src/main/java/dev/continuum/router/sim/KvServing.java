package dev.continuum.router.sim;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The fleet's KV serving path, off the frontend's event loop: tokenizes a prompt on one of two threads, serves it
 * on the worker's {@link WorkerKv} (cache, events, simulated prefill time; the worker hands its events to the
 * fleet's owner thread) and completes the request's first-token gate once its simulated time to first token has passed.
 * A body the tokenizer cannot read is served without KV (no gate), and counted.
 */
final class KvServing implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KvServing.class.getName());

    private final SimTokenizer tokenizer;
    private final ExecutorService encoders;
    private final ScheduledExecutorService timer;
    private final LongSupplier clock;
    private final AtomicLong unreadable = new AtomicLong();
    /** Every caching worker of the fleet, for the avoidable-token count; set once the workers exist. */
    private volatile List<WorkerKv> fleet = List.of();
    private final AvoidableTokens avoidable = new AvoidableTokens();

    private KvServing(SimTokenizer tokenizer, ExecutorService encoders, ScheduledExecutorService timer,
            LongSupplier clock) {
        this.tokenizer = tokenizer;
        this.encoders = encoders;
        this.timer = timer;
        this.clock = clock;
    }

    static KvServing start(SimKv kv) {
        SimTokenizer tokenizer = SimTokenizer.load(kv.tokenizerJson());
        return new KvServing(tokenizer, Executors.newFixedThreadPool(2, daemon("sim-kv-encode")),
                Executors.newSingleThreadScheduledExecutor(daemon("sim-kv-timer")), System::nanoTime);
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    SimTokenizer tokenizer() {
        return tokenizer;
    }

    /** The fleet's clock, in nanoseconds: arrivals and prefill ends are on it. */
    long now() {
        return clock.getAsLong();
    }

    /** The fleet's caching workers: each served prompt is compared with what the others held when it arrived. */
    void fleet(List<WorkerKv> workers) {
        fleet = List.copyOf(workers);
    }

    /**
     * Prompt tokens served uncached although another worker of the fleet held them when the request was served:
     * per request, the longest prefix any other rank held (in tokens, at most the prompt) minus what the serving
     * rank held, when positive. The simulator's own count, from its caches, with no event delay.
     */
    long avoidableTokens() {
        return avoidable.anyRankTotal();
    }

    /** As {@link #avoidableTokens}, counting only other ranks with no more prefill work queued than the serving one. */
    long avoidableNotBusierTokens() {
        return avoidable.notBusierTotal();
    }

    /** The same counts request by request, kept by the router's decision id when the request carried one. */
    AvoidableTokens avoidable() {
        return avoidable;
    }

    /** Bodies served without KV because they could not be read as a chat request. */
    long unreadable() {
        return unreadable.get();
    }

    /** Told a prompt's block hashes (by sequence hash) and its token count once the simulator tokenized it. */
    interface BlocksKnown {
        void tokenized(long[] seqHashes, int promptTokens);
    }

    /** What a prompt served without KV tells as its block hashes: none, so its blocks count one per block. */
    private static final long[] NO_HASHES = new long[0];

    /**
     * Serves {@code body} on {@code rank} of {@code worker} for a request arriving now; the future completes when
     * its first token may be sent. {@code blocksKnown} learns the prompt's tokens and block hashes once it is
     * tokenized. {@code decisionId} is the router's record of the request ({@code x-continuum-decision-id}), -1
     * without one: its avoidable tokens are kept by it ({@link AvoidableTokens}).
     */
    CompletableFuture<Void> serve(WorkerKv worker, int rank, String body, long decisionId, BlocksKnown blocksKnown) {
        long arrival = clock.getAsLong();
        CompletableFuture<Void> firstToken = new CompletableFuture<>();
        // Who was busier is judged when the request arrived, as the router judged it when it decided: by the time the
        // prompt is tokenized (long prompts, a loaded machine) a queue may have drained that the router saw full.
        long[] queued = queuedAt(arrival);
        // About four characters of body per prompt token: counted as the rank's backlog until tokenized.
        long estimate = body.length() / 4;
        worker.announce(rank, estimate);
        try {
            encoders.execute(() -> {
                try {
                    int[] tokens = tokenizer.promptTokens(body);
                    Held others = heldElsewhere(worker, rank, tokens, queued);
                    WorkerKv.Served s = worker.serve(rank, tokens, arrival, estimate);
                    blocksKnown.tokenized(s.seqHashes(), s.promptTokens());
                    avoidable.served(decisionId, new AvoidableTokens.Served(
                            Math.max(0, others.any() - s.cachedTokens()),
                            Math.max(0, others.notBusier() - s.cachedTokens()), s.cachedTokens(), s.promptTokens()));
                    long wait = arrival + s.ttftNanos() - clock.getAsLong();
                    timer.schedule(() -> firstToken.complete(null), Math.max(0, wait), TimeUnit.NANOSECONDS);
                } catch (RuntimeException e) {
                    worker.withdraw(rank, estimate);
                    blocksKnown.tokenized(NO_HASHES, (int) Math.min(Integer.MAX_VALUE, estimate)); // one per block
                    if (unreadable.getAndIncrement() == 0) {
                        LOG.log(System.Logger.Level.WARNING, "sim fleet: a prompt served without KV: " + e);
                    }
                    firstToken.complete(null);
                }
            });
        } catch (RejectedExecutionException e) {
            worker.withdraw(rank, estimate);
            blocksKnown.tokenized(NO_HASHES, (int) Math.min(Integer.MAX_VALUE, estimate));
            firstToken.complete(null); // closing
        }
        return firstToken;
    }

    /** The longest prefix of a prompt other ranks held, in tokens: any of them, and those not busier. */
    private record Held(long any, long notBusier) {
    }

    /**
     * Each rank's prefill work queued at {@code now}, in tokens, in the fleet's order (worker by worker, rank by
     * rank); taken before the arriving request is announced, so the serving rank's entry is the work ahead of it.
     */
    private long[] queuedAt(long now) {
        List<WorkerKv> workers = fleet;
        int n = 0;
        for (WorkerKv w : workers) {
            n += w.dpSize();
        }
        long[] queued = new long[n];
        int i = 0;
        for (WorkerKv w : workers) {
            for (int r = 0; r < w.dpSize() && i < n; r++) {
                queued[i++] = w.pendingPrefillTokens(r, now);
            }
        }
        return queued;
    }

    /**
     * What other ranks held of the prompt when it is served, the longest prefix in tokens: any of them, and those
     * whose queue at the request's arrival ({@code queued}, {@link #queuedAt}) was no longer than the serving rank's.
     */
    private Held heldElsewhere(WorkerKv serving, int servingRank, int[] tokens, long[] queued) {
        List<WorkerKv> workers = fleet;
        long ownWork = 0;
        int i = 0;
        for (WorkerKv w : workers) {
            for (int r = 0; r < w.dpSize(); r++, i++) {
                if (w == serving && r == servingRank && i < queued.length) {
                    ownWork = queued[i];
                }
            }
        }
        long any = 0;
        long notBusier = 0;
        i = 0;
        for (WorkerKv w : workers) {
            for (int r = 0; r < w.dpSize(); r++, i++) {
                if (w == serving && r == servingRank) {
                    continue;
                }
                long held = Math.min(tokens.length, (long) w.cachedPrefix(r, tokens) * w.blockSize());
                any = Math.max(any, held);
                if (held > notBusier && i < queued.length && queued[i] <= ownWork) {
                    notBusier = held;
                }
            }
        }
        return new Held(any, notBusier);
    }

    @Override
    public void close() {
        encoders.shutdownNow();
        timer.shutdownNow();
        tokenizer.close();
    }
}
