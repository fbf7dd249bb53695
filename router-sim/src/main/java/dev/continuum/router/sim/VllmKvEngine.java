package dev.continuum.router.sim;

import org.zeromq.ZContext;

/**
 * The KV side of one simulated plain vLLM engine, for tests of the router's {@code transport: zmq} sources: a
 * {@link PrefixCache} of {@code capacityBlocks} blocks whose changes go out as vLLM-native KV events
 * ({@link VllmKvPublisher}, in the {@link VllmKvGeneration} asked for) on its own PUB and replay sockets. Blocks are
 * named by {@link TokenBlocks}' sequence hashes XORed with a per-engine seed, as vLLM seeds its block hashes per
 * process ({@code PYTHONHASHSEED}, its {@code NONE_HASH}): two engines never name a block alike, and a router must
 * name blocks its own way to match prompts across them.
 *
 * <p>{@link #serve} and {@link #clear} are serialised on this object; the publisher sends from its own thread.
 */
public final class VllmKvEngine implements AutoCloseable {
    private final ZContext zmq = new ZContext(1);
    private final int blockSize;
    private final PrefixCache cache;
    private final VllmKvPublisher publisher;
    /** This engine's hash seed (never 0, so its names always differ from the unseeded sequence hashes). */
    private final long seed = new java.util.SplittableRandom().nextLong() | 1L;

    public VllmKvEngine(VllmKvGeneration generation, int blockSize, long capacityBlocks, String topic) {
        if (blockSize < 1 || capacityBlocks < 1) {
            throw new IllegalArgumentException("blockSize and capacityBlocks: expected >= 1");
        }
        this.blockSize = blockSize;
        this.cache = new PrefixCache(capacityBlocks);
        this.publisher = new VllmKvPublisher(zmq, generation, topic, VllmKvPublisher.DEFAULT_BUFFER_STEPS);
    }

    /** The PUB socket, {@code tcp://127.0.0.1:port}. */
    public String endpoint() {
        return publisher.endpoint();
    }

    /** The ROUTER replay socket. */
    public String replayEndpoint() {
        return publisher.replayEndpoint();
    }

    /** The engine's names of the complete blocks of {@code tokens}, first to last. */
    public long[] blockHashes(int[] tokens) {
        return named(TokenBlocks.of(tokens, blockSize).seqHashes());
    }

    /** {@code hashes} as this engine names them (a new array). */
    private long[] named(long[] hashes) {
        long[] out = new long[hashes.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = hashes[i] ^ seed;
        }
        return out;
    }

    /** Leading blocks of {@code tokens} the engine holds. */
    public synchronized int cachedPrefix(int[] tokens) {
        return cache.cachedPrefix(TokenBlocks.of(tokens, blockSize));
    }

    /** Serves a prompt: publishes its evictions, then its new blocks (one batch each, at most 128 blocks). */
    public synchronized int serve(int[] tokens) {
        TokenBlocks blocks = TokenBlocks.of(tokens, blockSize);
        PrefixCache.Admission a = cache.admit(blocks);
        double ts = System.currentTimeMillis() / 1000.0;
        for (int from = 0; from < a.evicted().length; from += WorkerKv.MAX_BATCH_BLOCKS) {
            int to = Math.min(a.evicted().length, from + WorkerKv.MAX_BATCH_BLOCKS);
            publisher.publish(VllmKvEncoding.removed(publisher.generation(), ts, 0, named(a.evicted()), from, to));
        }
        long[] seq = named(blocks.seqHashes());
        for (int from = a.cached(); from < a.stored(); from += WorkerKv.MAX_BATCH_BLOCKS) {
            int to = Math.min(a.stored(), from + WorkerKv.MAX_BATCH_BLOCKS);
            publisher.publish(VllmKvEncoding.stored(publisher.generation(), ts, 0, seq, from, to,
                    from == 0 ? null : seq[from - 1], tokens, blockSize));
        }
        return a.cached();
    }

    /** Empties the cache, publishing {@code AllBlocksCleared} when it held anything. */
    public synchronized void clear() {
        if (cache.clear()) {
            publisher.publish(VllmKvEncoding.cleared(publisher.generation(), System.currentTimeMillis() / 1000.0, 0));
        }
    }

    /** The next {@code n} batches are numbered and kept for replay but not sent: a subscriber sees a gap. */
    public void dropNext(int n) {
        publisher.dropNext(n);
    }

    /**
     * Publishes {@code payload} as the next batch, whatever it holds (a hostile or broken publisher): it is numbered
     * and kept for replay like any batch.
     */
    public void publishRaw(byte[] payload) {
        publisher.publish(payload.clone());
    }

    /** Batches sent on the PUB socket so far. */
    public long published() {
        return publisher.published();
    }

    @Override
    public void close() {
        publisher.close();
        zmq.close();
    }
}
