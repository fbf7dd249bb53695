package dev.continuum.router.eventplane;

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
 */
public record ChannelDialer(Function<CidrPolicy, ZmtpConnector> direct,
                            @Nullable Supplier<ZmtpConnector> broker) {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelDialer.class);

    /** Direct TCP under the configured policy; no broker. */
    public static final ChannelDialer DEFAULT = new ChannelDialer(
            policy -> DirectTcpConnector.builder().policy(policy).build(), null);

    public ChannelDialer {
        Objects.requireNonNull(direct, "direct");
    }

    /**
     * A new connector for {@code transport} (the caller closes it), or null under {@link Transport#BROKER}
     * without a broker connector: {@code family}'s subscriptions then stay pending, and a warning says so.
     */
    public @Nullable ZmtpConnector connectorFor(Transport transport, CidrPolicy dialPolicy, String family) {
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
