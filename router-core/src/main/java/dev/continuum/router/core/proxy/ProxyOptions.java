package dev.continuum.router.core.proxy;

import dev.continuum.router.core.auth.RateLimitLimits;
import io.netty.handler.ssl.SslContext;
import java.time.Clock;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What the proxy takes besides configuration: clocks (injectable so breakers, buckets, health
 * and key expiry are testable without sleeping), compiled-in bounds, and the TLS client context.
 *
 * @param nanoClock   monotonic nanoseconds ({@link System#nanoTime()} in production)
 * @param wallClock   wall time, for API key expiry
 * @param upstreamTls the client context for {@code https} backends; null = the JDK provider with
 *                    the default trust store and host-name verification (a private CA or client
 *                    certificates need a context of their own)
 */
public record ProxyOptions(LongSupplier nanoClock, Clock wallClock, RateLimitLimits rateLimitLimits,
                           UpstreamLimits upstreamLimits, @Nullable SslContext upstreamTls) {
    public static ProxyOptions defaults() {
        return new ProxyOptions(System::nanoTime, Clock.systemUTC(), RateLimitLimits.DEFAULT, UpstreamLimits.DEFAULT,
                null);
    }

    public ProxyOptions withNanoClock(LongSupplier clock) {
        return new ProxyOptions(clock, wallClock, rateLimitLimits, upstreamLimits, upstreamTls);
    }

    public ProxyOptions withWallClock(Clock clock) {
        return new ProxyOptions(nanoClock, clock, rateLimitLimits, upstreamLimits, upstreamTls);
    }

    public ProxyOptions withUpstreamTls(SslContext context) {
        if (!context.isClient()) {
            throw new IllegalArgumentException("upstreamTls: a server context (expected: a client context)");
        }
        return new ProxyOptions(nanoClock, wallClock, rateLimitLimits, upstreamLimits, context);
    }
}
