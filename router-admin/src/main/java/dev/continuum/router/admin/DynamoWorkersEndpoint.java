package dev.continuum.router.admin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.discovery.DynamoRegistry;
import dev.continuum.router.discovery.admin.DynamoWorkersJson;
import dev.continuum.router.eventplane.ChannelFamilyView;
import dev.continuum.router.load.LoadAdminView;
import dev.continuum.router.load.LoadSupervisor;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /admin/dynamo/workers}: discovery's view of the fleet (always, {@code "enabled": false}
 * when discovery is off) with the load and KV subsystems' {@code load_publishers}, {@code kv_event_publishers}
 * and {@code subscriptions} (kv_metrics, then kv-events) merged in, then {@code broker_coverage} (null unless
 * {@code dynamo.load.transport} is {@code broker}), then {@code kv_cache_index_sources} (the backend KV cache
 * index's SSE sources, one row each), then {@code kv_modes} (each namespace's KV mode and why). The renderers already leave out transport addresses and raw cards.
 */
public final class DynamoWorkersEndpoint implements AdminRoute.Handler {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final DynamoRegistry registry;
    private final LoadSupervisor load;
    private final ChannelFamilyView kvEvents;
    private final Supplier<@Nullable Object> brokerCoverage;
    private final Supplier<? extends List<?>> kvCacheIndexSources;
    private final Supplier<? extends List<?>> kvModes;

    public DynamoWorkersEndpoint(DynamoRegistry registry, LoadSupervisor load) {
        this(registry, load, ChannelFamilyView.NONE);
    }

    /** @param kvEvents the KV supervisor's kv-events subscriptions */
    public DynamoWorkersEndpoint(DynamoRegistry registry, LoadSupervisor load, ChannelFamilyView kvEvents) {
        this(registry, load, kvEvents, () -> null);
    }

    /**
     * @param brokerCoverage the event bus's {@code broker_coverage} now (a JSON-shaped list), or null under the
     *                       direct transport
     */
    public DynamoWorkersEndpoint(DynamoRegistry registry, LoadSupervisor load, ChannelFamilyView kvEvents,
                                 Supplier<@Nullable Object> brokerCoverage) {
        this(registry, load, kvEvents, brokerCoverage, List::of);
    }

    /**
     * @param kvCacheIndexSources the {@code dynamo.kv_cache_index} sources' rows now (JSON-shaped), read without a
     *                            lock
     */
    public DynamoWorkersEndpoint(DynamoRegistry registry, LoadSupervisor load, ChannelFamilyView kvEvents,
                                 Supplier<@Nullable Object> brokerCoverage,
                                 Supplier<? extends List<?>> kvCacheIndexSources) {
        this(registry, load, kvEvents, brokerCoverage, kvCacheIndexSources, List::of);
    }

    /** @param kvModes each namespace's KV mode and why (JSON-shaped rows), read without a lock */
    public DynamoWorkersEndpoint(DynamoRegistry registry, LoadSupervisor load, ChannelFamilyView kvEvents,
                                 Supplier<@Nullable Object> brokerCoverage,
                                 Supplier<? extends List<?>> kvCacheIndexSources,
                                 Supplier<? extends List<?>> kvModes) {
        this.registry = registry;
        this.load = load;
        this.kvEvents = kvEvents;
        this.brokerCoverage = brokerCoverage;
        this.kvCacheIndexSources = kvCacheIndexSources;
        this.kvModes = kvModes;
    }

    @Override
    public LocalResponse handle(LocalRequest request) throws Exception {
        ObjectNode body = DynamoWorkersJson.render(registry.snapshot());
        for (Map.Entry<String, Object> e : LoadAdminView.render(load, kvEvents).entrySet()) {
            body.set(e.getKey(), JSON.valueToTree(e.getValue()));
        }
        body.set("broker_coverage", JSON.valueToTree(brokerCoverage.get()));
        body.set("kv_cache_index_sources", JSON.valueToTree(kvCacheIndexSources.get()));
        body.set("kv_modes", JSON.valueToTree(kvModes.get()));
        return LocalResponse.json(200, JSON.writeValueAsBytes(body));
    }
}
