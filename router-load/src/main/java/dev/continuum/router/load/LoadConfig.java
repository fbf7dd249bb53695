package dev.continuum.router.load;

import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.Transport;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code dynamo.load}.
 *
 * @param maxStaleness     how old a sample may be and still count as fresh (100ms..5m, default 3s)
 * @param transport        how subscriptions reach publishers
 * @param directAllowCidrs networks a direct dial may reach, or null when unset (any address)
 */
public record LoadConfig(Duration maxStaleness, Transport transport, @Nullable List<String> directAllowCidrs) {
    public static final Duration MIN_MAX_STALENESS = Duration.ofMillis(100);
    public static final Duration MAX_MAX_STALENESS = Duration.ofMinutes(5);
    public static final LoadConfig DEFAULTS = new LoadConfig(LoadStore.DEFAULT_MAX_STALENESS, Transport.DIRECT, null);

    public LoadConfig {
        Objects.requireNonNull(maxStaleness, "maxStaleness");
        Objects.requireNonNull(transport, "transport");
        directAllowCidrs = directAllowCidrs == null ? null : List.copyOf(directAllowCidrs);
    }

    /** The dial policy of {@link #directAllowCidrs}. */
    public CidrPolicy dialPolicy() {
        return directAllowCidrs == null ? CidrPolicy.allowAny() : CidrPolicy.of(directAllowCidrs);
    }

    /** Whether a change to {@code other} must restart the subscriptions (a new transport or dial policy). */
    public boolean restartsSubscriptions(LoadConfig other) {
        return transport != other.transport || !Objects.equals(directAllowCidrs, other.directAllowCidrs);
    }
}
