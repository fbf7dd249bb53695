package dev.continuum.router.app;

import dev.continuum.router.core.config.DynamoSection;
import dev.continuum.router.discovery.config.DiscoverySection;
import dev.continuum.router.eventbus.config.EventBusSection;
import dev.continuum.router.kv.backend.config.KvCacheIndexSection;
import dev.continuum.router.kv.config.KvSection;
import dev.continuum.router.eventplane.nats.NatsSection;
import dev.continuum.router.load.LoadSection;
import dev.continuum.router.replicas.ReplicasSection;
import dev.continuum.router.shim.ShimSection;
import dev.continuum.router.shim.decisions.DecisionsSection;
import java.util.List;
import java.util.Map;

/**
 * The {@code dynamo:} sections this build binds, one per Dynamo module. A module adds its section
 * here when it lands; YAML for a section not listed is reported as inactive, never lost.
 */
record DynamoSections(DiscoverySection discovery, LoadSection load, ShimSection shim, KvSection kv,
        EventBusSection eventBus, KvCacheIndexSection kvCacheIndex, NatsSection nats,
        DecisionsSection decisions, ReplicasSection replicas) {
    static DynamoSections create(Map<String, String> environment) {
        return new DynamoSections(DiscoverySection.create(environment), new LoadSection(true), new ShimSection(),
                new KvSection(), new EventBusSection(), new KvCacheIndexSection(), new NatsSection(),
                new DecisionsSection(), new ReplicasSection());
    }

    List<DynamoSection<?>> all() {
        return List.of(discovery, load, shim, kv, eventBus, kvCacheIndex, nats, decisions, replicas);
    }
}
