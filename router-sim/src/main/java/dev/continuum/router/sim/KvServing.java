package dev.continuum.router.sim;

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
     * tokenized.
     */
    CompletableFuture<Void> serve(WorkerKv worker, int rank, String body, BlocksKnown blocksKnown) {
        long arrival = clock.getAsLong();
        CompletableFuture<Void> firstToken = new CompletableFuture<>();
        // About four characters of body per prompt token: counted as the rank's backlog until tokenized.
        long estimate = body.length() / 4;
        worker.announce(rank, estimate);
        try {
            encoders.execute(() -> {
                try {
                    WorkerKv.Served s = worker.serve(rank, tokenizer.promptTokens(body), arrival, estimate);
                    blocksKnown.tokenized(s.seqHashes(), s.promptTokens());
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

    @Override
    public void close() {
        encoders.shutdownNow();
        timer.shutdownNow();
        tokenizer.close();
    }
}
