package dev.continuum.router.proxy.auth;

import dev.continuum.router.core.net.Cidr;
import dev.continuum.router.core.config.ApiKeyConfig;
import dev.continuum.router.core.config.RateLimit;
import dev.continuum.router.core.config.RateLimitingConfig;
import dev.continuum.router.core.config.Secret;
import dev.continuum.router.proxy.metrics.RateLimitTier;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/** {@link RateLimits} over {@link TokenBucket}s; immutable apart from the buckets' own atomics. */
final class BucketRateLimits implements RateLimits {
    private final boolean enabled;
    private final LongSupplier nanoClock;
    private final List<Cidr> whitelist;
    private final Set<String> bypassKeyIds;
    /** Per key id: configured keys only, so bounded by configuration. */
    private final Map<String, TokenBucket> keyBuckets;
    private final Map<String, TokenBucket> backendBuckets;
    private final @Nullable RateLimit perBackend;
    private final @Nullable BoundedBucketMap<InetAddress> clientBuckets;
    private final @Nullable TokenBucket global;

    BucketRateLimits(RateLimitingConfig config, Iterable<ApiKeyConfig> keys, @Nullable RateLimits previousLimits,
                     LongSupplier nanoClock, RateLimitLimits bounds) {
        BucketRateLimits previous = previousLimits instanceof BucketRateLimits p ? p : null;
        long now = nanoClock.getAsLong();
        this.enabled = config.enabled();
        this.nanoClock = nanoClock;
        List<Cidr> cidrs = new ArrayList<>();
        for (String c : config.whitelist()) {
            cidrs.add(Cidr.parse(c));
        }
        this.whitelist = List.copyOf(cidrs);

        Set<String> bypass = new HashSet<>();
        Map<String, TokenBucket> kb = new HashMap<>();
        for (ApiKeyConfig k : keys) {
            for (Secret s : config.bypassKeys()) {
                if (s.matches(k.id()) || s.equals(k.key())) {
                    bypass.add(k.id());
                }
            }
            RateLimit limit = k.rateLimit() != null ? k.rateLimit() : (enabled ? config.perApiKey() : null);
            if (limit != null) {
                TokenBucket old = previous != null ? previous.keyBuckets.get(k.id()) : null;
                kb.put(k.id(), old != null && old.limit().equals(limit) ? old : new TokenBucket(limit, now));
            }
        }
        this.bypassKeyIds = Set.copyOf(bypass);
        this.keyBuckets = Map.copyOf(kb);
        this.perBackend = enabled ? config.perBackend() : null;
        this.backendBuckets = new java.util.concurrent.ConcurrentHashMap<>();
        if (previous != null && Objects.equals(previous.perBackend, perBackend)) {
            backendBuckets.putAll(previous.backendBuckets);
        }
        RateLimit perClient = enabled ? config.perClient() : null;
        if (perClient == null) {
            this.clientBuckets = null;
        } else if (previous != null && previous.clientBuckets != null
                && previous.clientBuckets.limit().equals(perClient)) {
            this.clientBuckets = previous.clientBuckets;
        } else {
            this.clientBuckets = new BoundedBucketMap<>(perClient, bounds.maxClientBuckets());
        }
        RateLimit g = enabled ? config.global() : null;
        if (g == null) {
            this.global = null;
        } else if (previous != null && previous.global != null && previous.global.limit().equals(g)) {
            this.global = previous.global;
        } else {
            this.global = new TokenBucket(g, now);
        }
    }

    @Override
    public RateDecision check(@Nullable InetAddress client, @Nullable ApiKeyConfig key) {
        if (key != null && bypassKeyIds.contains(key.id())) {
            return RateDecision.BYPASS;
        }
        if (client != null && !whitelist.isEmpty()) {
            for (Cidr c : whitelist) {
                if (c.contains(client)) {
                    return RateDecision.BYPASS;
                }
            }
        }
        long now = nanoClock.getAsLong();
        if (key != null) {
            TokenBucket kb = keyBuckets.get(key.id());
            if (kb != null) {
                long wait = kb.tryAcquire(now);
                if (wait > 0) {
                    return RateDecision.denied(RateLimitTier.API_KEY, wait);
                }
            }
        }
        if (!enabled) {
            return RateDecision.ALLOW;
        }
        BoundedBucketMap<InetAddress> clients = clientBuckets;
        if (clients != null && client != null) {
            long wait = clients.bucket(client, now).tryAcquire(now);
            if (wait > 0) {
                return RateDecision.denied(RateLimitTier.CLIENT, wait);
            }
        }
        if (global != null) {
            long wait = global.tryAcquire(now);
            if (wait > 0) {
                return RateDecision.denied(RateLimitTier.GLOBAL, wait);
            }
        }
        return RateDecision.ALLOW;
    }

    @Override
    public RateDecision checkBackend(String backend) {
        RateLimit limit = perBackend;
        if (limit == null) {
            return RateDecision.ALLOW;
        }
        long now = nanoClock.getAsLong();
        // Keys are configured backend names only (the caller passes a chosen backend), so bounded.
        TokenBucket b = backendBuckets.get(backend);
        if (b == null) {
            b = backendBuckets.computeIfAbsent(backend, n -> new TokenBucket(limit, now));
        }
        long wait = b.tryAcquire(now);
        return wait > 0 ? RateDecision.denied(RateLimitTier.BACKEND, wait) : RateDecision.ALLOW;
    }

    int clientBucketCount() {
        return clientBuckets == null ? 0 : clientBuckets.size();
    }
}
