package dev.continuum.router.proxy;

import dev.continuum.router.proxy.auth.RateLimitLimits;
import io.netty.handler.ssl.SslContext;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What the proxy takes besides configuration: clocks (injectable so breakers, buckets, health
 * and key expiry are testable without sleeping), compiled-in bounds, the TLS client context, and the
 * ingresses bound beside the built-in OpenAI routes.
 *
 * @param nanoClock   monotonic nanoseconds ({@link System#nanoTime()} in production)
 * @param wallClock   wall time, for API key expiry
 * @param upstreamTls the client context for {@code https} backends; null = the JDK provider with
 *                    the default trust store and host-name verification (a private CA or client
 *                    certificates need a context of their own)
 * @param ingresses   converting ingresses ({@link ProxyRoute#converted}), each on its own path
 * @param timer       what the per-request timeouts and the retry backoff run on ({@link ProxyTimer#SYSTEM} in
 *                    production); independent of {@code nanoClock}
 */
public record ProxyOptions(LongSupplier nanoClock, Clock wallClock, RateLimitLimits rateLimitLimits,
                           UpstreamLimits upstreamLimits, @Nullable SslContext upstreamTls,
                           List<ProxyRoute> ingresses, ProxyTimer timer) {
    public ProxyOptions {
        ingresses = List.copyOf(ingresses);
    }

    public static ProxyOptions defaults() {
        return new ProxyOptions(System::nanoTime, Clock.systemUTC(), RateLimitLimits.DEFAULT, UpstreamLimits.DEFAULT,
                null, List.of(), ProxyTimer.SYSTEM);
    }

    public ProxyOptions withNanoClock(LongSupplier clock) {
        return new ProxyOptions(clock, wallClock, rateLimitLimits, upstreamLimits, upstreamTls, ingresses, timer);
    }

    /** The timers of every request (timeouts, retry backoff) run on {@code t}: a test's virtual time. */
    public ProxyOptions withTimer(ProxyTimer t) {
        return new ProxyOptions(nanoClock, wallClock, rateLimitLimits, upstreamLimits, upstreamTls, ingresses, t);
    }

    public ProxyOptions withWallClock(Clock clock) {
        return new ProxyOptions(nanoClock, clock, rateLimitLimits, upstreamLimits, upstreamTls, ingresses, timer);
    }

    public ProxyOptions withUpstreamTls(SslContext context) {
        if (!context.isClient()) {
            throw new IllegalArgumentException("upstreamTls: a server context (expected: a client context)");
        }
        return new ProxyOptions(nanoClock, wallClock, rateLimitLimits, upstreamLimits, context, ingresses, timer);
    }

    /** Adds an ingress (converted, passthrough or local); its path must not be taken by a built-in route or another ingress. */
    public ProxyOptions withIngress(ProxyRoute route) {
        if (route.converter() == null && route.kind() != ProxyRoute.Kind.COMPLETIONS) {
            throw new IllegalArgumentException("ingresses: " + route
                    + " (expected: a route made by ProxyRoute.converted, passthrough or local)");
        }
        List<ProxyRoute> next = new ArrayList<>(ingresses);
        next.add(route);
        ProxyRoutes.of(next); // fails on a taken path
        return new ProxyOptions(nanoClock, wallClock, rateLimitLimits, upstreamLimits, upstreamTls, next, timer);
    }
}
