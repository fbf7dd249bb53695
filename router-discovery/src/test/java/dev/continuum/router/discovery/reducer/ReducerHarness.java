package dev.continuum.router.discovery.reducer;

import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.DynamoPublisher;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.PublisherId;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A reducer with a hand-moved clock and counted events, and shorthand for feeding it. */
final class ReducerHarness {
    final MutableClock clock = MutableClock.atSeedExampleTime();
    final Map<DiscoveryEventKind, Integer> counts = new EnumMap<>(DiscoveryEventKind.class);
    final DiscoveryCounters counters = kind -> counts.merge(kind, 1, Integer::sum);
    final DiscoveryReducer reducer;

    ReducerHarness(String... namespaces) {
        this(DiscoveryLimits.defaults(), namespaces);
    }

    ReducerHarness(DiscoveryLimits limits, String... namespaces) {
        this.reducer = DiscoveryReducer.create(List.of(namespaces.length == 0 ? new String[] {"dynamo"} : namespaces),
                limits, clock, counters, Map.of());
    }

    boolean put(String key, String json) {
        return reducer.apply(DiscoveryEvent.Put.of(key, json));
    }

    boolean put(String key, byte[] value) {
        return reducer.apply(new DiscoveryEvent.Put(key, value));
    }

    boolean delete(String key) {
        return reducer.apply(new DiscoveryEvent.Delete(key));
    }

    /** {@code keysAndValues}: key, json, key, json, ... */
    boolean resync(String... keysAndValues) {
        List<DiscoveryEvent.Put> puts = new ArrayList<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            puts.add(new DiscoveryEvent.Put(keysAndValues[i], keysAndValues[i + 1].getBytes(StandardCharsets.UTF_8)));
        }
        return reducer.apply(new DiscoveryEvent.Resync(puts));
    }

    FleetView view() {
        return reducer.view();
    }

    List<DynamoWorker> workers() {
        return reducer.view().workers();
    }

    Optional<DynamoWorker> worker(long instanceId) {
        return worker("dynamo", instanceId);
    }

    Optional<DynamoWorker> worker(String namespace, long instanceId) {
        return reducer.view().worker(new WorkerId(namespace, instanceId));
    }

    Optional<DynamoPublisher> publisher(String namespace, long publisherId) {
        return reducer.view().publisher(new PublisherId(namespace, publisherId));
    }

    int count(DiscoveryEventKind kind) {
        return counts.getOrDefault(kind, 0);
    }
}
