package dev.continuum.router.sim;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.zeromq.ZContext;

/**
 * One simulated worker's KV side: a {@link PrefixCache} and a prefill queue per data-parallel rank, and its
 * kv-events publisher. Serving a prompt looks up its cached prefix, stores the rest (evicting what no longer
 * fits), queues the events that describe this and returns the prompt's simulated time to first token:
 *
 * {@link PrefillQueue}'s model, one queue per rank: one prefill at a time per rank, in arrival order, costing
 * {@code prefillBase + prefillPerToken × uncached tokens}.
 *
 * <p>Events: the evicted blocks as {@code removed}, then the new blocks as {@code stored} (parent: the last cached
 * block), each split in batches of at most {@link #MAX_BATCH_BLOCKS} blocks as upstream's publisher batches them;
 * {@code event_id} counts from 0 per rank with no gap. They are queued here and sent by {@link #flush}, which the
 * {@code sender} runs (the fleet's owner thread, the only thread that touches the socket).
 *
 * <p>{@link #serve}, {@link #cachedPrefix} and {@link #clear} are serialised on this object; {@link #flush} is
 * called on the owner thread only.
 */
final class WorkerKv implements AutoCloseable {
    static final int MAX_BATCH_BLOCKS = 128;

    /** What serving one prompt cost. */
    /** @param seqHashes the prompt's full blocks, by sequence hash (what a prefix-caching engine shares) */
    record Served(int rank, int promptTokens, int cachedTokens, long ttftNanos, long[] seqHashes) {
    }

    private final long workerId;
    private final int blockSize;
    private final SimKv options;
    private final PrefixCache[] caches;
    private final PrefillQueue[] queues;
    private final long[] nextEventId;
    private final EventPublisher publisher;
    /** vLLM's own stream beside Dynamo's, when {@link SimKv#vllmEvents()} asks for it. */
    private final @Nullable VllmKvPublisher vllm;
    private final Executor sender;
    private final PrefillCounts prefills;
    private final ConcurrentLinkedQueue<byte[]> outbox = new ConcurrentLinkedQueue<>();
    private final ServeCounters counters = new ServeCounters();

    /** @param sender runs {@link #flush} after events were queued: the thread that owns the socket */
    WorkerKv(ZContext zmq, long publisherId, long workerId, int dpSize, int blockSize, long capacityBlocks,
            SimKv options, Executor sender) {
        this(zmq, publisherId, workerId, dpSize, blockSize, capacityBlocks, options, sender, new PrefillCounts());
    }

    /** @param prefills where each block prefilled here is counted (shared by the fleet) */
    WorkerKv(ZContext zmq, long publisherId, long workerId, int dpSize, int blockSize, long capacityBlocks,
            SimKv options, Executor sender, PrefillCounts prefills) {
        this.prefills = prefills;
        this.sender = sender;
        this.workerId = workerId;
        this.blockSize = blockSize;
        this.options = options;
        this.caches = new PrefixCache[dpSize];
        this.queues = new PrefillQueue[dpSize];
        this.nextEventId = new long[dpSize];
        for (int r = 0; r < dpSize; r++) {
            caches[r] = new PrefixCache(capacityBlocks);
            queues[r] = new PrefillQueue(options.prefillBase(), options.prefillPerToken());
        }
        this.publisher = new EventPublisher(zmq, KvEventEncoding.TOPIC, publisherId);
        VllmKvGeneration g = options.vllmEvents();
        this.vllm = g == null ? null : new VllmKvPublisher(zmq, g, "", VllmKvPublisher.DEFAULT_BUFFER_STEPS);
    }

    /** The worker's vLLM-native KV-event publisher, or null when {@link SimKv#vllmEvents()} is off. */
    @Nullable VllmKvPublisher vllm() {
        return vllm;
    }

    int blockSize() {
        return blockSize;
    }

    int dpSize() {
        return caches.length;
    }

    long publisherId() {
        return publisher.publisherId();
    }

    String endpoint() {
        return publisher.endpoint();
    }

    /** Messages sent so far (the envelope sequence). */
    long published() {
        return publisher.published();
    }

    /**
     * Serves {@code tokens} on {@code rank} (a negative or unknown rank is rank 0) for a request that arrived at
     * {@code arrivalNanos} (on the fleet's clock).
     */
    synchronized Served serve(int rank, int[] tokens, long arrivalNanos) {
        return serve(rank, tokens, arrivalNanos, 0);
    }

    /**
     * A request arrived for {@code rank} with about {@code tokens} prompt tokens and will be {@link #serve}d
     * once the simulator has tokenized it: until then its estimate counts in {@link #pendingPrefillTokens}, as
     * an engine counts a request in its queue from the moment it receives it (tokenizing is the simulator's
     * own delay, not the modelled engine's).
     */
    synchronized void announce(int rank, long tokens) {
        queues[rank >= 0 && rank < caches.length ? rank : 0].announce(tokens);
    }

    /** An announced request that will not be served (its body could not be read). */
    synchronized void withdraw(int rank, long tokens) {
        queues[rank >= 0 && rank < caches.length ? rank : 0].withdraw(tokens);
    }

    /** As {@link #serve(int, int[], long)}, for a request {@link #announce}d with {@code announcedTokens}. */
    synchronized Served serve(int rank, int[] tokens, long arrivalNanos, long announcedTokens) {
        int r = rank >= 0 && rank < caches.length ? rank : 0;
        TokenBlocks blocks = TokenBlocks.of(tokens, blockSize);
        PrefixCache.Admission a = caches[r].admit(blocks);
        for (int from = 0; from < a.evicted().length; from += MAX_BATCH_BLOCKS) {
            int to = Math.min(a.evicted().length, from + MAX_BATCH_BLOCKS);
            outbox.add(KvEventEncoding.removed(workerId, nextEventId[r]++, r, a.evicted(), from, to));
            if (vllm != null) {
                vllm.publish(VllmKvEncoding.removed(vllm.generation(), now(), r, a.evicted(), from, to));
            }
        }
        long[] seq = blocks.seqHashes();
        prefills.prefilled(seq, a.cached());
        for (int from = a.cached(); from < a.stored(); from += MAX_BATCH_BLOCKS) {
            int to = Math.min(a.stored(), from + MAX_BATCH_BLOCKS);
            outbox.add(KvEventEncoding.stored(workerId, nextEventId[r]++, r, from == 0 ? null : seq[from - 1], seq,
                    blocks.tokenHashes(), from, to));
            if (vllm != null) {
                vllm.publish(VllmKvEncoding.stored(vllm.generation(), now(), r, seq, from, to,
                        from == 0 ? null : seq[from - 1], tokens, blockSize));
            }
        }
        int cached = Math.min(tokens.length, a.cached() * blockSize);
        long uncached = tokens.length - cached;
        long ttft = queues[r].admit(arrivalNanos, uncached, announcedTokens);
        counters.served(tokens.length, cached, ttft);
        send();
        return new Served(r, tokens.length, cached, ttft, seq);
    }

    /** vLLM's batch {@code ts}: wall-clock seconds. */
    private static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    /** Leading blocks of {@code tokens} cached on {@code rank}, without touching them. */
    synchronized int cachedPrefix(int rank, int[] tokens) {
        return caches[rank].cachedPrefix(TokenBlocks.of(tokens, blockSize));
    }

    /** When {@code rank}'s prefill queue empties (on the fleet's clock); in the past when idle. */
    synchronized long prefillEnd(int rank) {
        return queues[rank].end();
    }

    /**
     * The prompt tokens {@code rank} still has to prefill at {@code now}: its prefill queue's remaining time
     * over the cost per token (a fixed prefill cost counts as the tokens it would take; none in the replay),
     * plus the estimates of the requests {@link #announce}d and not yet served. What
     * {@code active_prefill_tokens} reports when {@link SimKv#reportPrefillBacklog()} is on.
     */
    synchronized long pendingPrefillTokens(int rank, long now) {
        return queues[rank].pendingTokens(now);
    }

    boolean reportsPrefillBacklog() {
        return options.reportPrefillBacklog();
    }

    /** Blocks cached on {@code rank}. */
    synchronized int cachedBlocks(int rank) {
        return caches[rank].size();
    }

    synchronized boolean contains(int rank, long seqHash) {
        return caches[rank].contains(seqHash);
    }

    /** Empties every rank's cache; a rank that held blocks publishes {@code cleared}. */
    synchronized void clear() {
        for (int r = 0; r < caches.length; r++) {
            if (caches[r].clear()) {
                outbox.add(KvEventEncoding.cleared(workerId, nextEventId[r]++, r));
                if (vllm != null) {
                    vllm.publish(VllmKvEncoding.cleared(vllm.generation(), now(), r));
                }
            }
        }
        send();
    }

    private void send() {
        if (outbox.isEmpty()) {
            return;
        }
        try {
            sender.execute(this::flush);
        } catch (RejectedExecutionException e) {
            // The fleet is closing: its sockets are gone with it.
        }
    }

    synchronized ServeCounters.Stats stats() {
        return counters.stats();
    }

    /** Sends the queued events, oldest first. On the sender only. */
    void flush() {
        for (byte[] event = outbox.poll(); event != null; event = outbox.poll()) {
            publisher.publish(event);
        }
    }

    /** Owner thread only. */
    @Override
    public void close() {
        publisher.close();
        if (vllm != null) {
            vllm.close();
        }
    }
}
