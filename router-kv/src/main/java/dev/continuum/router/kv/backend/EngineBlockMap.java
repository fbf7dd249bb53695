package dev.continuum.router.kv.backend;

import dev.continuum.router.kv.hash.BlockHasher;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One engine's block names translated into the router's (docs/kv-routing.md, "One block identity"). An engine
 * names a block by its own hash, which depends on its settings (hash algorithm, seed); the router names it by the
 * chained hash it computes for a prompt ({@link BlockHasher}: XXH3-64 of the block's token IDs, chained to the
 * parent's with {@link BlockHasher#chain}). A {@code BlockStored} event carries both the tokens and the parent's
 * engine hash, so each stored block gets its router hash here, and a later {@code BlockRemoved}, which names the
 * engine hash only, resolves through the map. The index then holds router hashes, which a prompt matches without
 * the router reproducing any engine's hashing.
 *
 * <p>Bounded by the caller's {@code max_blocks_per_backend}, cleared with its backend; confined to the source's
 * event loop (no lock).
 */
final class EngineBlockMap {
    /** What became of one stored event. */
    enum Stored { APPLIED, NO_TOKENS, UNKNOWN_PARENT, OVER_CAPACITY }

    private final String backend;
    private final BackendKvIndex index;
    private final int maxBlocks;
    private final Map<Long, Long> routerHashOf = new HashMap<>();

    EngineBlockMap(String backend, BackendKvIndex index, int maxBlocks) {
        this.backend = backend;
        this.index = index;
        this.maxBlocks = maxBlocks;
    }

    /** Names the event's blocks the router's way and adds them to the index, or nothing when it cannot. */
    Stored stored(EngineKvDecoder.Event e) {
        long[] engine = e.blockHashes();
        int size = e.blockSize();
        if (engine.length == 0) {
            return Stored.APPLIED;
        }
        // The decoder checked that token IDs, when present, fill exactly the event's blocks.
        if (e.tokenIds().length == 0 || size <= 0) {
            return Stored.NO_TOKENS;
        }
        Long parent = null;
        Long parentEngine = e.parentHash();
        if (parentEngine != null) {
            parent = routerHashOf.get(parentEngine);
            if (parent == null) {
                return Stored.UNKNOWN_PARENT;
            }
        }
        long[] local = BlockHasher.unsalted().blockHashes(e.tokenIds(), size);
        long[] router = new long[engine.length];
        for (int i = 0; i < engine.length; i++) {
            long h = parent == null ? local[i] : BlockHasher.chain(parent, local[i]);
            router[i] = h;
            parent = h;
        }
        int fresh = 0;
        for (long h : engine) {
            if (!routerHashOf.containsKey(h)) {
                fresh++;
            }
        }
        if (routerHashOf.size() + fresh > maxBlocks || !index.store(backend, router, maxBlocks)) {
            return Stored.OVER_CAPACITY;
        }
        for (int i = 0; i < engine.length; i++) {
            routerHashOf.put(engine[i], router[i]);
        }
        index.blockSize(backend, size);
        return Stored.APPLIED;
    }

    /** Removes the blocks named by the engine's hashes; a hash never stored (or already gone) changes nothing. */
    void removed(long[] engineHashes) {
        long[] router = new long[engineHashes.length];
        int n = 0;
        for (long h : engineHashes) {
            Long r = routerHashOf.remove(h);
            if (r != null) {
                router[n++] = r;
            }
        }
        if (n > 0) {
            index.remove(backend, n == router.length ? router : java.util.Arrays.copyOf(router, n));
        }
    }

    /** The engine's cache is gone (cleared, restarted, a gap that could not be replayed, the source stopped). */
    void clear() {
        routerHashOf.clear();
        index.clear(backend);
    }

    int size() {
        return routerHashOf.size();
    }

    /** The router hash of an engine block, or null when unknown (tests). */
    @Nullable Long routerHash(long engineHash) {
        return routerHashOf.get(engineHash);
    }
}
