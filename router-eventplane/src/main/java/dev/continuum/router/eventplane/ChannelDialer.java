package dev.continuum.router.eventplane;

import dev.continuum.router.eventplane.nats.NatsConnection;
import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.zmtp.DirectTcpConnector;
import dev.continuum.router.eventplane.zmtp.ZmtpConnector;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How event-channel subscriptions reach their publishers for a {@link Transport} kind: a direct TCP connector
 * under a dial policy ({@code direct_allow_cidrs}), or the event bus's broker connector. Shared by the load and
 * KV supervisors, so both families dial the same way. The dialer knows no consumer: the caller says which
 * transport its configuration chose.
 *
 * @param direct makes the direct connector for a dial policy (tests inject a scripted resolver)
 * @param broker makes the broker connector, or null when this build has no event bus
 * @param nats   the process's shared NATS connection, which channels whose record names the {@code Nats}
 *               transport subscribe through, or null without one (they are then not subscribed)
 */
public record ChannelDialer(Function<CidrPolicy, ZmtpConnector> direct,
                            @Nullable Supplier<ZmtpConnector> broker, @Nullable NatsConnection nats) {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelDialer.class);

    /** Direct TCP under the configured policy; no broker. */
    public static final ChannelDialer DEFAULT = new ChannelDialer(
            policy -> DirectTcpConnector.builder().policy(policy).build(), null, null);

    public ChannelDialer {
        Objects.requireNonNull(direct, "direct");
    }

    /** Direct and broker ZMQ only: channels on the {@code Nats} transport are not subscribed. */
    public ChannelDialer(Function<CidrPolicy, ZmtpConnector> direct, @Nullable Supplier<ZmtpConnector> broker) {
        this(direct, broker, null);
    }

    /** This dialer with {@code connection} for NATS channels. */
    public ChannelDialer withNats(@Nullable NatsConnection connection) {
        return new ChannelDialer(direct, broker, connection);
    }

    /**
     * A new connector for {@code transport} (the caller closes it), or null under {@link Transport#BROKER}
     * without a broker connector: {@code family}'s subscriptions then stay pending, and a warning says so.
     */
    public @Nullable ZmtpConnector connectorFor(Transport transport, CidrPolicy dialPolicy, String family) {
        if (transport == Transport.NATS) {
            throw new IllegalArgumentException("NATS is a channel's own transport, not a configured ZMQ one");
        }
        if (transport == Transport.DIRECT) {
            return direct.apply(dialPolicy);
        }
        if (broker != null) {
            return broker.get();
        }
        LOG.warn("the event-plane transport is broker but this build has no event bus: {} subscriptions stay pending",
                family);
        return null;
    }
}
