package dev.continuum.router.app;

import java.util.Map;
import java.util.Properties;

/**
 * Netty settings the daemon runs with unless the operator passes the same system property
 * ({@code -Dname=value}) on the command line. Each was measured in front of the same upstream
 * (docs/operations.md, "Netty settings"):
 * <ul>
 *   <li>{@code io.netty.leakDetection.level=disabled}: Netty's default samples one buffer in 128 and
 *   captures a stack trace for it, about 2 µs of CPU per proxied request here. The test suite runs
 *   with {@code paranoid} detection and fails on any leak, which is where leaks are caught.</li>
 *   <li>{@code io.netty.allocator.type=pooled}: Netty 4.2's default adaptive allocator cost about
 *   1 µs more per request than the pooled one, at the same resident memory.</li>
 * </ul>
 * Must run before any Netty class is loaded: both are read once, in static initializers.
 */
final class NettyDefaults {
    static final Map<String, String> DEFAULTS = Map.of(
            "io.netty.leakDetection.level", "disabled",
            "io.netty.allocator.type", "pooled");

    private NettyDefaults() {
    }

    /** Sets each default the operator has not set. */
    static void applyUnlessSet(Properties system) {
        DEFAULTS.forEach(system::putIfAbsent);
    }
}
