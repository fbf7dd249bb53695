package dev.continuum.router.kv.hash;

import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A map from 128-bit keys (a strong hash's prefix) to immutable values, bounded in bytes (each value's own weight
 * plus a fixed per-entry overhead), least recently used first out. The prompt pipeline's caches are made of it:
 * token IDs by segment, rendered conversation prefixes, and block hashes by prefix ({@link BlockHashCache}).
 *
 * <p>No lock: a hit is a map read and a stamp; an insert reserves its bytes with one atomic add. When a reserve
 * crosses the bound, one inserting thread at a time evicts in a batch, the least recently stamped entries until
 * the cache is at three quarters of its bound (a scan and a primitive sort of the stamps per batch, amortised over
 * the quarter of the bound that fills before the next); an insert that still does not fit is not cached. So the
 * bytes held never exceed the bound, whatever the traffic.
 *
 * @param <V> the values; never written once cached
 */
public abstract class ByteBoundedCache<V> {
    /** Bytes charged per entry besides its value: key, entry, map node and array headers. */
    public static final int ENTRY_OVERHEAD = 112;

    /** A 128-bit key. */
    public record Key(long hi, long lo) {
    }

    /** Where the cache reports (metrics). */
    public interface Listener {
        void evicted(long entries);

        Listener NONE = n -> { };
    }

    private static final class Entry<V> {
        final Key key;
        final V value;
        final long bytes;
        volatile long stamp;

        Entry(Key key, V value, long bytes, long stamp) {
            this.key = key;
            this.value = value;
            this.bytes = bytes;
            this.stamp = stamp;
        }
    }

    private final ConcurrentHashMap<Key, Entry<V>> entries = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong clock = new AtomicLong();
    private final AtomicBoolean evicting = new AtomicBoolean();
    private final Listener listener;
    private volatile long maxBytes;

    protected ByteBoundedCache(long maxBytes, Listener listener) {
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes " + maxBytes);
        }
        this.maxBytes = maxBytes;
        this.listener = listener;
    }

    /** What {@code value} weighs, without the per-entry overhead. */
    protected abstract long weigh(V value);

    /** Whether anything may be cached (a bound of 0 turns the cache off). */
    public final boolean enabled() {
        return maxBytes > 0;
    }

    public final long maxBytes() {
        return maxBytes;
    }

    /** Bytes held now (never above {@link #maxBytes()} once a shrink has evicted). */
    public final long bytes() {
        return bytes.get();
    }

    public final int size() {
        return entries.size();
    }

    /** A new bound (a reload); shrinking evicts at once, 0 empties the cache. */
    public final void resize(long newMaxBytes) {
        if (newMaxBytes < 0) {
            throw new IllegalArgumentException("maxBytes " + newMaxBytes);
        }
        maxBytes = newMaxBytes;
        if (bytes.get() > newMaxBytes) {
            evict(newMaxBytes);
        }
    }

    /**
     * Whether the cache has room to spare: it holds less than three quarters of its bound, the level eviction
     * brings it back to. Until then the prompt caches admit what they see the first time; after, only what they see
     * again ({@link Sightings}).
     */
    public final boolean hasRoom() {
        long max = maxBytes;
        return bytes.get() < max - max / 4;
    }

    /** The value cached for {@code key} (shared: the caller never writes it), or null. */
    public final @Nullable V get(Key key) {
        Entry<V> e = entries.get(key);
        if (e == null) {
            return null;
        }
        e.stamp = clock.incrementAndGet();
        return e.value;
    }

    /** Caches {@code value} (owned by the cache from now on) unless it does not fit; true when cached. */
    public final boolean put(Key key, V value) {
        long max = maxBytes;
        Entry<V> e = new Entry<>(key, value, weigh(value) + ENTRY_OVERHEAD, clock.incrementAndGet());
        if (e.bytes > max / 4) {
            return false; // one entry may not flush a quarter of the cache
        }
        if (bytes.addAndGet(e.bytes) > max) {
            evict(max - max / 4);
            if (bytes.get() > max) {
                bytes.addAndGet(-e.bytes);
                return false;
            }
        }
        if (entries.putIfAbsent(key, e) != null) {
            bytes.addAndGet(-e.bytes);
            return false;
        }
        return true;
    }

    /** Evicts least recently used entries until at most {@code target} bytes are held; one thread at a time. */
    private void evict(long target) {
        if (!evicting.compareAndSet(false, true)) {
            return;
        }
        try {
            long removed = 0;
            // Each round removes the oldest entries by a stamp threshold estimated from the mean entry size; a
            // round that falls short (entries of uneven sizes) is followed by another over what is left.
            for (int round = 0; round < 8 && bytes.get() > target; round++) {
                @SuppressWarnings("unchecked")
                Entry<V>[] all = entries.values().toArray(new Entry[0]);
                if (all.length == 0) {
                    break;
                }
                long[] stamps = new long[all.length];
                long held = 0;
                for (int i = 0; i < all.length; i++) {
                    stamps[i] = all[i].stamp;
                    held += all[i].bytes;
                }
                long excess = bytes.get() - target;
                long mean = Math.max(1, held / all.length);
                int cut = (int) Math.min(all.length, Math.max(1, (excess + mean - 1) / mean));
                long[] sorted = stamps.clone();
                Arrays.sort(sorted);
                long threshold = sorted[cut - 1];
                for (int i = 0; i < all.length; i++) {
                    Entry<V> e = all[i];
                    if (stamps[i] <= threshold && entries.remove(e.key, e)) {
                        bytes.addAndGet(-e.bytes);
                        removed++;
                    }
                }
            }
            if (removed > 0) {
                listener.evicted(removed);
            }
        } finally {
            evicting.set(false);
        }
    }
}
