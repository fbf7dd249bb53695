package dev.continuum.router.load;

import dev.continuum.router.load.zmtp.CidrPolicy;
import dev.continuum.router.load.zmtp.DirectTcpConnector;
import dev.continuum.router.load.zmtp.Transport;
import dev.continuum.router.load.zmtp.ZmtpConnector;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How event-channel subscriptions reach their publishers under {@code dynamo.load}'s {@code transport}: a
 * direct TCP connector under the {@code direct_allow_cidrs} policy, or the event bus's broker connector. Shared
 * by the load and KV supervisors, so both families dial the same way.
 *
 * @param direct makes the direct connector for a dial policy (tests inject a scripted resolver)
 * @param broker makes the broker connector, or null when this build has no event bus
 */
public record ChannelDialer(Function<CidrPolicy, ZmtpConnector> direct,
                            @Nullable Function<LoadConfig, ZmtpConnector> broker) {
    private static final Logger LOG = LoggerFactory.getLogger(ChannelDialer.class);

    /** Direct TCP under the configured policy; no broker. */
    public static final ChannelDialer DEFAULT = new ChannelDialer(
            policy -> DirectTcpConnector.builder().policy(policy).build(), null);

    public ChannelDialer {
        Objects.requireNonNull(direct, "direct");
    }

    /**
     * A new connector for {@code config} (the caller closes it), or null under {@code transport: broker}
     * without a broker connector: {@code family}'s subscriptions then stay pending, and a warning says so.
     */
    public @Nullable ZmtpConnector connectorFor(LoadConfig config, String family) {
        if (config.transport() == Transport.DIRECT) {
            return direct.apply(config.dialPolicy());
        }
        if (broker != null) {
            return broker.apply(config);
        }
        LOG.warn("dynamo.load.transport is broker but this build has no event bus: {} subscriptions stay pending",
                family);
        return null;
    }
}
