package dev.continuum.router.core.proxy;

import dev.continuum.router.core.auth.RateLimitLimits;
import java.time.Clock;
import java.util.function.LongSupplier;

/**
 * What the proxy takes besides configuration: clocks (injectable so breakers, buckets, health
 * and key expiry are testable without sleeping) and compiled-in bounds.
 *
 * @param nanoClock monotonic nanoseconds ({@link System#nanoTime()} in production)
 * @param wallClock wall time, for API key expiry
 */
public record ProxyOptions(LongSupplier nanoClock, Clock wallClock, RateLimitLimits rateLimitLimits,
                           UpstreamLimits upstreamLimits) {
    public static ProxyOptions defaults() {
        return new ProxyOptions(System::nanoTime, Clock.systemUTC(), RateLimitLimits.DEFAULT, UpstreamLimits.DEFAULT);
    }

    public ProxyOptions withNanoClock(LongSupplier clock) {
        return new ProxyOptions(clock, wallClock, rateLimitLimits, upstreamLimits);
    }

    public ProxyOptions withWallClock(Clock clock) {
        return new ProxyOptions(nanoClock, clock, rateLimitLimits, upstreamLimits);
    }
}
