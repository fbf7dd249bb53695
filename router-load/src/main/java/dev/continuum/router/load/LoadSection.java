package dev.continuum.router.load;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.core.config.Problems;
import dev.continuum.router.core.config.ReloadClass;
import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.core.net.IpLiterals;
import dev.continuum.router.eventplane.zmtp.CidrPolicy;
import dev.continuum.router.eventplane.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Binds, validates and diffs {@code dynamo.load}:
 *
 * <pre>
 * dynamo:
 *   load:
 *     max_staleness: 3s            # 100ms..5m; applied immediately on reload
 *     transport: direct            # direct | broker; a change restarts only the subscriptions
 *     direct_allow_cidrs:          # up to 64 IPv4/IPv6 CIDRs; unset allows any address
 *       - 10.0.0.0/8
 * </pre>
 *
 * Register one instance with the config loader ({@code ConfigLoader.builder().dynamoSection(new LoadSection())}).
 */
public final class LoadSection implements DynamoSection<LoadConfig> {
    static final String BROKER_WITHOUT_BUS = "\"broker\": the event bus is not in this build; kv_metrics "
            + "subscriptions stay pending and workers get no load samples";
    static final String SUGGEST_CIDRS = "unset: any resolved publisher address may be dialed "
            + "(suggestion: list the worker Pod CIDRs)";

    private final boolean brokerAvailable;

    /** A section for a build without the event bus: {@code transport: broker} is accepted with a warning. */
    public LoadSection() {
        this(false);
    }

    /** @param brokerAvailable whether this build carries a broker connector (the event bus) */
    public LoadSection(boolean brokerAvailable) {
        this.brokerAvailable = brokerAvailable;
    }

    @Override
    public String key() {
        return "load";
    }

    @Override
    public Class<LoadConfig> type() {
        return LoadConfig.class;
    }

    @Override
    public LoadConfig defaults() {
        return LoadConfig.DEFAULTS;
    }

    @Override
    public @Nullable LoadConfig bind(ConfigNode node, Problems problems) {
        Duration maxStaleness = node.get("max_staleness").asDuration(LoadConfig.DEFAULTS.maxStaleness(),
                LoadConfig.MIN_MAX_STALENESS, LoadConfig.MAX_MAX_STALENESS);
        ConfigNode transportNode = node.get("transport");
        Transport transport = transportNode.asChoice(Transport.DIRECT, t -> Transport.configurable(t).orElse(null),
                "direct or broker");
        if (transport == Transport.BROKER && !brokerAvailable) {
            transportNode.warning(BROKER_WITHOUT_BUS);
        }
        return new LoadConfig(maxStaleness, transport, cidrs(node.get("direct_allow_cidrs")));
    }

    private static @Nullable List<String> cidrs(ConfigNode node) {
        if (!node.isPresent()) {
            return null;
        }
        if (node.kind() != ConfigNode.Kind.LIST) {
            node.invalid("a list of IPv4 or IPv6 CIDRs");
            return null;
        }
        List<ConfigNode> elements = node.elements();
        if (elements.isEmpty()) {
            node.error("[] (expected: at least one CIDR, or omit the key to allow any address)");
            return null;
        }
        if (elements.size() > CidrPolicy.MAX_CIDRS) {
            node.error(elements.size() + " entries (expected: at most " + CidrPolicy.MAX_CIDRS + ")");
            return null;
        }
        List<String> cidrs = new ArrayList<>();
        for (ConfigNode element : elements) {
            String text = element.asStringOrNull();
            if (text == null || !IpLiterals.isAddressOrCidr(text.trim())) {
                element.invalid("an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8; host names are not resolved");
                continue;
            }
            cidrs.add(text.trim());
        }
        return cidrs;
    }

    @Override
    public void crossCheck(LoadConfig value, RouterConfig config, Problems problems) {
        if (config.dynamo().enabled() && value.transport() == Transport.DIRECT && value.directAllowCidrs() == null) {
            problems.warning("dynamo.load.direct_allow_cidrs", SUGGEST_CIDRS);
        }
    }

    /** {@code max_staleness} applies on the next freshness check; transport or CIDRs restart only the subscriptions. */
    @Override
    public ReloadClass reloadClass(LoadConfig before, LoadConfig after) {
        return before.restartsSubscriptions(after) ? ReloadClass.RESTART_SUBSYSTEM : ReloadClass.IMMEDIATE;
    }
}
