package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.config.RateLimit;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Token buckets keyed by an untrusted value (a client address), bounded in number without locks:
 * two generations of maps. Lookups hit the current generation, then the previous one (and move
 * the bucket forward); when the current generation holds half the cap it becomes the previous one
 * and the old previous one is dropped. Memory stays under {@code cap} buckets, and a bucket
 * survives as long as it was used within the last generation: an approximate LRU.
 */
final class BoundedBucketMap<K> {
    private record Generations<K>(ConcurrentHashMap<K, TokenBucket> current,
                                  ConcurrentHashMap<K, TokenBucket> previous) {
    }

    private final RateLimit limit;
    private final int generationCap;
    private final AtomicReference<Generations<K>> generations =
            new AtomicReference<>(new Generations<>(new ConcurrentHashMap<>(), new ConcurrentHashMap<>()));

    BoundedBucketMap(RateLimit limit, int cap) {
        this.limit = limit;
        this.generationCap = Math.max(1, cap / 2);
    }

    private Generations<K> current() {
        return Objects.requireNonNull(generations.get()); // initialised here, only ever swapped for a new one
    }

    RateLimit limit() {
        return limit;
    }

    TokenBucket bucket(K key, long nowNanos) {
        Generations<K> g = current();
        TokenBucket b = g.current.get(key);
        if (b != null) {
            return b;
        }
        b = g.previous.get(key);
        if (b == null) {
            b = new TokenBucket(limit, nowNanos);
        }
        TokenBucket raced = g.current.putIfAbsent(key, b);
        if (raced != null) {
            return raced;
        }
        if (g.current.size() >= generationCap) {
            // One winner rotates; losers simply keep using what they have.
            generations.compareAndSet(g, new Generations<>(new ConcurrentHashMap<>(), g.current));
        }
        return b;
    }

    int size() {
        Generations<K> g = current();
        return g.current.size() + g.previous.size();
    }
}
