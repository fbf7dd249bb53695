package dev.continuum.router.eventbus;

import java.time.Duration;
import java.util.Objects;

/**
 * The listener's fixed protocol timers (docs/event-bus-protocol.md, section 1). They are not configuration:
 * a compatible client relies on them. Tests pass shorter ones so a timeout is observed in milliseconds.
 *
 * @param handshake   TCP accept to finished TLS handshake
 * @param auth        TCP accept to the first 2xx answer on the connection
 * @param hello       session request headers to a complete {@code hello}
 * @param ping        interval of the router's HTTP/2 PINGs
 * @param linger      how long a connection stays open after its last accepted request ended
 */
public record ListenerTimings(Duration handshake, Duration auth, Duration hello, Duration ping, Duration linger) {
    public static final ListenerTimings DEFAULTS = new ListenerTimings(Duration.ofSeconds(10), Duration.ofSeconds(10),
            Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(30));

    public ListenerTimings {
        for (Duration d : new Duration[] {handshake, auth, hello, ping, linger}) {
            Objects.requireNonNull(d, "timing");
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("timing: " + d + " (expected: > 0)");
            }
        }
    }
}
