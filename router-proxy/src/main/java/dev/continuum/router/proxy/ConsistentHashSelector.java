package dev.continuum.router.proxy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * {@code ConsistentHash} with bounded loads (Mirrokni, Thorup and Zadimoghaddam, "Consistent Hashing with
 * Bounded Loads", 2016): every backend owns {@code virtual_nodes * weight} points on a 64-bit ring; a key goes to
 * the first point at or after its hash whose backend is a candidate and is under the bound
 * {@code ceil(load_factor * (in_flight + 1) / candidates)} (at most {@value #MAX_POINTS} points, scaled down
 * evenly beyond), where {@code in_flight} sums the candidates' attempts
 * in flight. So the same key sticks to one backend while it is not overloaded, and no backend is ever given a
 * request above the bound (the +1 counts the request being placed). Adding or removing a backend moves only
 * the keys of its points.
 *
 * <p>The ring is built once per configuration generation and only read afterwards. A request without a key
 * (the header or the first user message missing) goes to a uniformly random candidate under the bound.
 */
final class ConsistentHashSelector implements BackendSelector {
    private final long[] points;
    /** The backend index ({@link Backend#index()}) owning each point, aligned with {@link #points}. */
    private final int[] owners;
    private final double loadFactor;
    /** Ring points in all: 64 backends of weight 1000 would otherwise ask for millions. */
    static final int MAX_POINTS = 100_000;

    ConsistentHashSelector(List<Backend> backends, double loadFactor, int virtualNodes) {
        this.loadFactor = loadFactor;
        long wanted = 0;
        for (Backend b : backends) {
            wanted += (long) virtualNodes * b.config().weight();
        }
        double scale = wanted > MAX_POINTS ? (double) MAX_POINTS / wanted : 1.0;
        int[] perBackend = new int[backends.size()];
        int total = 0;
        for (int i = 0; i < backends.size(); i++) {
            perBackend[i] = Math.max(1, (int) (virtualNodes * backends.get(i).config().weight() * scale));
            total += perBackend[i];
        }
        long[] hashes = new long[total];
        int[] ownerOf = new int[total];
        int k = 0;
        for (Backend b : backends) {
            long base = AffinityKeys.SEED;
            for (byte c : b.name().getBytes(StandardCharsets.UTF_8)) {
                base = (base ^ (c & 0xff)) * 0x100000001b3L;
            }
            for (int v = 0; v < perBackend[b.index()]; v++) {
                hashes[k] = AffinityKeys.fmix(base + 0x9e3779b97f4a7c15L * (v + 1));
                ownerOf[k] = b.index();
                k++;
            }
        }
        // Sort points and carry their owners along (index sort; done once per generation).
        Integer[] order = new Integer[total];
        for (int i = 0; i < total; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (x, y) -> Long.compareUnsigned(hashes[x], hashes[y]));
        this.points = new long[total];
        this.owners = new int[total];
        for (int i = 0; i < total; i++) {
            points[i] = hashes[order[i]];
            owners[i] = ownerOf[order[i]];
        }
    }

    @Override
    public Backend pick(List<Backend> candidates) {
        return pick(candidates, 0);
    }

    @Override
    public Backend pick(List<Backend> candidates, long key) {
        int n = candidates.size();
        if (n == 1) {
            return candidates.get(0);
        }
        long inFlight = 0;
        for (int i = 0; i < n; i++) {
            inFlight += candidates.get(i).resources().inFlight.get();
        }
        long bound = bound(inFlight, n);
        if (key == 0 || points.length == 0) {
            int offset = ThreadLocalRandom.current().nextInt(n);
            for (int i = 0; i < n; i++) {
                Backend b = candidates.get((offset + i) % n);
                if (b.resources().inFlight.get() < bound) {
                    return b;
                }
            }
            return candidates.get(offset);
        }
        int at = firstAtOrAfter(key);
        for (int step = 0; step < points.length; step++) {
            int owner = owners[(at + step) % points.length];
            Backend b = candidate(candidates, owner);
            if (b != null && b.resources().inFlight.get() < bound) {
                return b;
            }
        }
        // Every candidate is at its bound (counts moved under us): the key's own backend.
        for (int step = 0; step < points.length; step++) {
            Backend b = candidate(candidates, owners[(at + step) % points.length]);
            if (b != null) {
                return b;
            }
        }
        return candidates.get(0);
    }

    /** {@code ceil(c * (inFlight + 1) / n)}, at least 1, saturating. */
    long bound(long inFlight, int n) {
        double b = Math.ceil(loadFactor * (inFlight + 1) / n);
        return b >= Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(1, (long) b);
    }

    private int firstAtOrAfter(long key) {
        int lo = 0;
        int hi = points.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(points[mid], key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo == points.length ? 0 : lo;
    }

    private static @Nullable Backend candidate(List<Backend> candidates, int index) {
        for (int i = 0; i < candidates.size(); i++) {
            Backend b = candidates.get(i);
            if (b.index() == index) {
                return b;
            }
        }
        return null;
    }
}
