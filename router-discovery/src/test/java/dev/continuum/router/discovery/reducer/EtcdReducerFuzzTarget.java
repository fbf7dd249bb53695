package dev.continuum.router.discovery.reducer;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.testing.DynamoRecords;
import dev.continuum.router.testing.MutableClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Coverage-guided fuzzing of the etcd record parser and reducer (docs/testing.md, "Fuzzing"). The fuzzer
 * drives a sequence of puts, deletes and resyncs over a small key space (so records collide, replace and
 * vanish), with values that are upstream-shaped records with fuzzed fields or raw fuzzed bytes.
 *
 * <p>The contract checked: no event throws; only the watched namespace ever makes a worker; and the view is
 * a function of the keys held, not of the path taken: a fresh reducer given one resync of the final key set
 * shows the same workers and publishers as the one that saw every event (the key space stays below the
 * keyspace cap, where insertion order would legitimately matter).
 */
class EtcdReducerFuzzTarget {
    private static final String NS = "dynamo";
    private static final String[] NAMESPACES = {NS, "other"};
    private static final String[] COMPONENTS = {"prefill", "decode", "backend"};
    private static final String[] ENDPOINTS = {"generate", "load_metrics"};
    private static final long[] IDS = {0x1a859e868630c5L, 7, -1L};
    private static final String[] TOPICS = {"kv_metrics", "kv-events"};
    /** Small values, so the record-size bound is reachable; a cap far above the key space (see above). */
    private static final DiscoveryLimits LIMITS = new DiscoveryLimits(4096, 256, 1024);

    @FuzzTest(maxDuration = "10s")
    void theViewDependsOnlyOnTheKeysHeld(FuzzedDataProvider data) {
        DiscoveryReducer reducer = reducer();
        Map<String, byte[]> held = new LinkedHashMap<>();
        int steps = data.consumeInt(1, 24);
        for (int i = 0; i < steps && data.remainingBytes() > 0; i++) {
            switch (data.consumeInt(0, 9)) {
                case 0 -> {
                    String key = key(data);
                    held.remove(key);
                    reducer.apply(new DiscoveryEvent.Delete(key));
                }
                case 1 -> {
                    List<DiscoveryEvent.Put> puts = new ArrayList<>();
                    held.clear();
                    int n = data.consumeInt(0, 6);
                    for (int j = 0; j < n; j++) {
                        String key = key(data);
                        byte[] value = value(data, key);
                        if (held.put(key, value) == null) {
                            puts.add(new DiscoveryEvent.Put(key, value));
                        } else {
                            puts.replaceAll(p -> p.key().equals(key) ? new DiscoveryEvent.Put(key, value) : p);
                        }
                    }
                    reducer.apply(new DiscoveryEvent.Resync(puts));
                }
                default -> {
                    String key = key(data);
                    byte[] value = value(data, key);
                    held.put(key, value);
                    reducer.apply(new DiscoveryEvent.Put(key, value));
                }
            }
            for (DynamoWorker worker : reducer.view().workers()) {
                assertThat(worker.namespace()).isEqualTo(NS);
            }
        }

        DiscoveryReducer fresh = reducer();
        List<DiscoveryEvent.Put> all = new ArrayList<>();
        held.forEach((k, v) -> all.add(new DiscoveryEvent.Put(k, v)));
        fresh.apply(new DiscoveryEvent.Resync(all));
        assertSameView(reducer.view(), fresh.view());
    }

    private static DiscoveryReducer reducer() {
        DiscoveryCounters counters = kind -> { };
        return DiscoveryReducer.create(List.of(NS), LIMITS, MutableClock.atSeedExampleTime(), counters,
                FleetView.empty());
    }

    private static void assertSameView(FleetView incremental, FleetView resynced) {
        List<DynamoWorker> a = sorted(incremental.workers());
        List<DynamoWorker> b = sorted(resynced.workers());
        assertThat(a).hasSameSizeAs(b);
        for (int i = 0; i < a.size(); i++) {
            assertThat(a.get(i).sameViewAs(b.get(i))).as("worker %s vs %s", a.get(i), b.get(i)).isTrue();
        }
        assertThat(incremental.publishers()).containsExactlyInAnyOrderElementsOf(resynced.publishers());
    }

    private static List<DynamoWorker> sorted(List<DynamoWorker> workers) {
        return workers.stream().sorted(Comparator.comparing((DynamoWorker w) -> w.id().namespace())
                .thenComparing(w -> Long.toUnsignedString(w.id().instanceId()))).toList();
    }

    private static String key(FuzzedDataProvider data) {
        String ns = data.pickValue(NAMESPACES);
        String component = data.pickValue(COMPONENTS);
        String endpoint = data.pickValue(ENDPOINTS);
        long id = data.pickValue(new Long[] {IDS[0], IDS[1], IDS[2]});
        return switch (data.consumeInt(0, 3)) {
            case 0 -> DynamoRecords.endpointKey(ns, component, endpoint, id);
            case 1 -> DynamoRecords.cardKey(ns, component, endpoint, id);
            case 2 -> DynamoRecords.channelKey(ns, component, endpoint, data.pickValue(TOPICS), id);
            default -> "v1/" + data.consumeString(48);
        };
    }

    /** A record shaped for its key (with fuzzed fields and identities), or raw fuzzed bytes. */
    private static byte[] value(FuzzedDataProvider data, String key) {
        String[] segments = key.split("/");
        String ns = segments.length > 2 ? segments[2] : NS;
        String component = data.pickValue(COMPONENTS);
        String endpoint = data.pickValue(ENDPOINTS);
        long id = data.pickValue(new Long[] {IDS[0], IDS[1], IDS[2]});
        String json = switch (data.consumeInt(0, 4)) {
            case 0 -> DynamoRecords.endpoint(ns, component, endpoint, id);
            case 1 -> DynamoRecords.model(ns, component, endpoint, id,
                    DynamoRecords.card(data.consumeString(16), data.pickValue(new String[] {"Prefill", "Decode", ""})));
            case 2 -> DynamoRecords.channel(ns, component, endpoint, data.pickValue(TOPICS), id,
                    data.pickValue(new String[] {"tcp://10.0.0.4:5557", "tcp://*:1", "ipc:///x", "tcp://[::1]:9"}));
            case 3 -> DynamoRecords.endpoint(ns, component, endpoint, id)
                    .replace("\"instance_id\":" + Long.toUnsignedString(id), "\"instance_id\":" + data.consumeString(24));
            default -> null;
        };
        return json != null ? json.getBytes(StandardCharsets.UTF_8) : data.consumeBytes(512);
    }
}
