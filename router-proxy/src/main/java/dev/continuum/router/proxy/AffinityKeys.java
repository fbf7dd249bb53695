package dev.continuum.router.proxy;

import dev.continuum.router.core.config.ConsistentHashConfig;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.config.SelectionStrategy;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * The 64-bit keys {@code ConsistentHash} routes by: FNV-1a over UTF-16 code units, then a murmur3 finalizer so
 * nearby inputs land far apart on the ring. No allocation; 0 means "no key" and is never produced for one.
 */
final class AffinityKeys {
    static final long SEED = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;

    private AffinityKeys() {
    }

    static long mix(long hash, char[] chars, int offset, int length) {
        long h = hash;
        for (int i = offset; i < offset + length; i++) {
            h ^= chars[i];
            h *= PRIME;
        }
        return h;
    }

    static long mix(long hash, CharSequence s) {
        long h = hash;
        for (int i = 0; i < s.length(); i++) {
            h ^= s.charAt(i);
            h *= PRIME;
        }
        return h;
    }

    static long finish(long h) {
        long z = fmix(h);
        return z == 0 ? 1 : z;
    }

    static long fmix(long k) {
        long z = k;
        z ^= z >>> 33;
        z *= 0xff51afd7ed558ccdL;
        z ^= z >>> 33;
        z *= 0xc4ceb9fe1a85ec53L;
        z ^= z >>> 33;
        return z;
    }

    /** A request's {@code ConsistentHash} key: its header's or its first user message's (0: none, or another strategy). */
    static long of(RouterConfig config, HttpHeaders headers, ParsedRequest p) {
        if (config.selectionStrategy() != SelectionStrategy.CONSISTENT_HASH) {
            return 0;
        }
        ConsistentHashConfig ch = config.consistentHash();
        String header = ch == null ? null : ch.header();
        return ch != null && ch.key() == ConsistentHashConfig.Key.HEADER && header != null
                ? ofHeader(headers, header) : p.firstUserMessageKey();
    }

    /** The key of a header's value, or 0 when the request does not carry it (or carries it empty). */
    static long ofHeader(HttpHeaders headers, String name) {
        String v = headers.get(name);
        return v == null || v.isEmpty() ? 0 : finish(mix(SEED, v));
    }
}
