package dev.continuum.router.discovery.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.reducer.Keyspace;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DynamoWorkerMetadata resources joined with EndpointSlice readiness, fed to the etcd reducer incrementally.
 *
 * <p>A resource's records ({@code spec.data}'s maps, keyed by etcd key suffix) are held per resource name; the
 * resource contributes them to the reducer only while it is <em>active</em>: some selected EndpointSlice has a
 * ready endpoint whose {@code targetRef.name} is the resource's name, and the resource was not refused. Several
 * resources may contribute one key (a namespace-scoped event channel): the key is put with its first
 * contributor's value, stays while any contributor remains, and is re-put with a survivor's value when the one
 * shown leaves. Every change returns only the events for the keys it touched.
 *
 * <p>Not thread-safe: the pass's thread owns it.
 */
final class MetadataFleet {
    private static final Logger LOG = LoggerFactory.getLogger(MetadataFleet.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** {@code spec.data} map → the etcd bucket its keys live under. */
    private static final Map<String, String> MAPS = linked("endpoints", "v1/instances/", "model_cards", "v1/mdc/",
            "event_channels", "v1/event_channels/", "event_sources", "v1/event_channels/");
    /** Model card fields the router reads; an oversized {@code card_json} keeps only these. */
    private static final Set<String> TYPED_CARD_FIELDS = Set.of("display_name", "name", "worker_type",
            "context_length", "runtime_config", "model_type", "kv_cache_block_size", "disaggregated_endpoint",
            "model_input", "lora");

    /** What one resource holds. */
    private record Held(@Nullable String uid, Map<String, byte[]> records, long bytes, boolean refused) {
    }

    /** What the caps and "once" memories survive across relists. */
    static final class Memory {
        /** Names remembered per "once" memory; past it the eldest is forgotten (and may log again). */
        static final int MAX_REMEMBERED = 16_384;

        final Set<String> mismatched = bounded();
        final Set<String> refused = bounded();
        final Set<String> malformed = bounded();
        final Set<String> overCap = bounded();

        /** Object names come from the cluster: a set of them must not grow without bound. */
        private static Set<String> bounded() {
            return Collections.newSetFromMap(new LinkedHashMap<String, Boolean>() {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > MAX_REMEMBERED;
                }
            });
        }
    }

    private final List<String> prefixes;
    private final MetadataLimits limits;
    private final DiscoveryCounters counters;
    private final Memory memory;
    private final Map<String, Held> resources = new HashMap<>();
    private long heldBytes;
    /** Ready targetRef names per EndpointSlice name. */
    private final Map<String, Set<String>> readyBySlice = new HashMap<>();
    /** How many slices list a name as ready. */
    private final Map<String, Integer> readyCount = new HashMap<>();
    /** Contributors of every fed key, in arrival order; the first one's value is what the reducer holds. */
    private final Map<String, LinkedHashMap<String, byte[]>> contributions = new HashMap<>();
    /** The keys each active resource contributes. */
    private final Map<String, Set<String>> active = new HashMap<>();

    MetadataFleet(List<String> dynamoNamespaces, MetadataLimits limits, DiscoveryCounters counters, Memory memory) {
        this.prefixes = Keyspace.prefixes(dynamoNamespaces);
        this.limits = limits;
        this.counters = counters;
        this.memory = memory;
    }

    int resources() {
        return resources.size();
    }

    long heldBytes() {
        return heldBytes;
    }

    /** Every key the reducer should hold now, with its shown value: a pass's seed or a relist's resync. */
    List<DiscoveryEvent.Put> records() {
        List<DiscoveryEvent.Put> puts = new ArrayList<>(contributions.size());
        contributions.forEach((key, byResource) -> puts.add(new DiscoveryEvent.Put(key,
                byResource.values().iterator().next())));
        return puts;
    }

    /**
     * A resource was added or modified.
     *
     * @param spec the resource's {@code spec} as plain Java values (maps, lists, strings, numbers), or anything
     *             else when the resource is malformed
     * @param ownerPod the name of the Pod that owns the resource, or null when it names none
     */
    List<DiscoveryEvent> putResource(String name, @Nullable String uid, @Nullable Object spec,
                                     @Nullable String ownerPod) {
        Held previous = resources.get(name);
        if (previous == null && resources.size() >= limits.maxResources()) {
            overCap(name, limits.maxResources() + " resources are held already (MAX_RESOURCES)");
            return List.of();
        }
        Held next;
        if (ownerPod != null && !ownerPod.equals(name)) {
            // Container mode: <pod>-<container> resources; this source supports pod mode only.
            if (memory.refused.add(name)) {
                counters.increment(DiscoveryEventKind.REFUSED);
                LOG.warn("DynamoWorkerMetadata {} refused: owned by Pod {} (container discovery mode is not "
                        + "supported)", LogSafe.escape(name), LogSafe.escape(ownerPod));
            }
            next = new Held(uid, Map.of(), 0, true);
        } else {
            memory.refused.remove(name);
            Map<String, byte[]> records = parse(name, spec);
            if (records == null) {
                // Malformed: keep the last valid records of the same object (same uid), as upstream's daemon does.
                if (memory.malformed.add(name)) {
                    counters.increment(DiscoveryEventKind.MALFORMED);
                    LOG.warn("DynamoWorkerMetadata {}: spec or spec.data is not an object; keeping its last valid "
                            + "records", LogSafe.escape(name));
                }
                next = previous != null && Objects.equals(previous.uid(), uid) ? previous
                        : new Held(uid, Map.of(), 0, false);
            } else {
                memory.malformed.remove(name);
                String mismatch = mismatch(name, records);
                if (mismatch != null) {
                    if (memory.mismatched.add(name)) {
                        counters.increment(DiscoveryEventKind.MISMATCH);
                        LOG.warn("DynamoWorkerMetadata {} refused: {}", LogSafe.escape(name), LogSafe.escape(mismatch));
                    }
                    next = new Held(uid, Map.of(), 0, true);
                } else {
                    memory.mismatched.remove(name);
                    long bytes = records.values().stream().mapToLong(v -> v.length).sum();
                    long without = heldBytes - (previous == null ? 0 : previous.bytes());
                    if (without + bytes > limits.maxRecordBytes()) {
                        overCap(name, "its records would bring the held total above " + limits.maxRecordBytes()
                                + " bytes");
                        next = new Held(uid, Map.of(), 0, true);
                    } else {
                        next = new Held(uid, records, bytes, false);
                    }
                }
            }
        }
        heldBytes += next.bytes() - (previous == null ? 0 : previous.bytes());
        resources.put(name, next);
        return refeed(name);
    }

    List<DiscoveryEvent> deleteResource(String name) {
        Held previous = resources.remove(name);
        if (previous == null) {
            return List.of();
        }
        heldBytes -= previous.bytes();
        memory.overCap.remove(name);
        return refeed(name);
    }

    /** An EndpointSlice was added or modified: its ready target names now are {@code readyNames}. */
    List<DiscoveryEvent> putSlice(String slice, Set<String> readyNames) {
        if (!readyBySlice.containsKey(slice) && readyBySlice.size() >= limits.maxSlices()) {
            // Watch-added slices obey the same cap as listed ones; held slices still update.
            if (memory.overCap.add("EndpointSlice/" + slice)) {
                counters.increment(DiscoveryEventKind.MALFORMED);
                LOG.warn("EndpointSlice {} ignored: {} slices are held already (MAX_SLICES)", LogSafe.escape(slice),
                        limits.maxSlices());
            }
            return List.of();
        }
        Set<String> before = readyBySlice.getOrDefault(slice, Set.of());
        readyBySlice.put(slice, Set.copyOf(readyNames));
        return toggle(before, readyNames);
    }

    List<DiscoveryEvent> deleteSlice(String slice) {
        Set<String> before = readyBySlice.remove(slice);
        return before == null ? List.of() : toggle(before, Set.of());
    }

    private List<DiscoveryEvent> toggle(Set<String> before, Set<String> after) {
        List<DiscoveryEvent> events = new ArrayList<>();
        Set<String> touched = new HashSet<>();
        for (String name : before) {
            if (!after.contains(name)) {
                readyCount.computeIfPresent(name, (k, n) -> n == 1 ? null : n - 1);
                touched.add(name);
            }
        }
        for (String name : after) {
            if (!before.contains(name)) {
                readyCount.merge(name, 1, Integer::sum);
                touched.add(name);
            }
        }
        for (String name : touched) {
            events.addAll(refeed(name));
        }
        return events;
    }

    /** Brings one resource's contributions in line with its records and readiness; returns the reducer events. */
    private List<DiscoveryEvent> refeed(String name) {
        Held held = resources.get(name);
        boolean live = held != null && !held.refused() && readyCount.containsKey(name);
        Map<String, byte[]> wanted = live && held != null ? held.records() : Map.of();
        Set<String> had = active.getOrDefault(name, Set.of());
        List<DiscoveryEvent> events = new ArrayList<>();
        for (String key : had) {
            if (!wanted.containsKey(key)) {
                // Every active key has a contribution: they are added and removed together.
                LinkedHashMap<String, byte[]> byResource = Objects.requireNonNull(contributions.get(key));
                byte[] shown = byResource.values().iterator().next();
                byResource.remove(name);
                if (byResource.isEmpty()) {
                    contributions.remove(key);
                    events.add(new DiscoveryEvent.Delete(key));
                } else {
                    byte[] survivor = byResource.values().iterator().next();
                    if (!Arrays.equals(shown, survivor)) {
                        events.add(new DiscoveryEvent.Put(key, survivor));
                    }
                }
            }
        }
        wanted.forEach((key, value) -> {
            LinkedHashMap<String, byte[]> byResource = contributions.computeIfAbsent(key, k -> new LinkedHashMap<>());
            byte[] shown = byResource.isEmpty() ? null : byResource.values().iterator().next();
            byte[] mine = byResource.get(name);
            if (mine != null && Arrays.equals(mine, value)) {
                return;
            }
            byResource.put(name, value);
            byte[] nowShown = byResource.values().iterator().next();
            if (shown == null || !Arrays.equals(shown, nowShown)) {
                events.add(new DiscoveryEvent.Put(key, nowShown));
            }
        });
        if (wanted.isEmpty()) {
            active.remove(name);
        } else {
            active.put(name, new HashSet<>(wanted.keySet()));
        }
        return events;
    }

    private void overCap(String name, String why) {
        if (memory.overCap.add(name)) {
            counters.increment(DiscoveryEventKind.MALFORMED);
            LOG.warn("DynamoWorkerMetadata {} refused: {}", LogSafe.escape(name), LogSafe.escape(why));
        }
    }

    /**
     * The records of {@code spec.data} under the watched namespaces, as etcd keys and JSON values; null when
     * {@code spec} or {@code spec.data} is not an object. Null maps read as empty (upstream's serde default).
     */
    private @Nullable Map<String, byte[]> parse(String name, @Nullable Object spec) {
        if (!(spec instanceof Map<?, ?> specMap) || !(specMap.get("data") instanceof Map<?, ?> data)) {
            return null;
        }
        Map<String, byte[]> records = new LinkedHashMap<>();
        for (Map.Entry<String, String> map : MAPS.entrySet()) {
            Object entries = data.get(map.getKey());
            if (!(entries instanceof Map<?, ?> byKey)) {
                continue;
            }
            for (Map.Entry<?, ?> entry : byKey.entrySet()) {
                String key = map.getValue() + entry.getKey();
                if (prefixes.stream().noneMatch(key::startsWith)) {
                    continue;
                }
                JsonNode value = MAPPER.valueToTree(entry.getValue());
                if (map.getKey().equals("model_cards")) {
                    value = trimCard(name, value);
                }
                records.put(key, value.toString().getBytes(StandardCharsets.UTF_8));
            }
        }
        return records;
    }

    /** A card_json above the retained-card bound keeps only the fields the router reads. */
    private JsonNode trimCard(String name, JsonNode record) {
        JsonNode card = record.get("card_json");
        if (card == null || !card.isObject() || card.toString().length() <= limits.maxCardBytes()) {
            return record;
        }
        ObjectNode trimmed = MAPPER.createObjectNode();
        card.fields().forEachRemaining(e -> {
            if (TYPED_CARD_FIELDS.contains(e.getKey())) {
                trimmed.set(e.getKey(), e.getValue());
            }
        });
        LOG.debug("DynamoWorkerMetadata {}: card_json above {} bytes trimmed to its typed fields", LogSafe.escape(name),
                limits.maxCardBytes());
        ObjectNode copy = ((ObjectNode) record).deepCopy();
        copy.set("card_json", trimmed);
        return copy;
    }

    /**
     * Why the endpoint and card records do not all carry {@code hash_pod_name(name)} in both key and value, or
     * null when they do. Event channels are exempt: their instance_id is the publisher's.
     */
    private static @Nullable String mismatch(String name, Map<String, byte[]> records) {
        long expected = PodNameHash.hashPodName(name);
        String hex = Long.toHexString(expected);
        for (Map.Entry<String, byte[]> record : records.entrySet()) {
            String key = record.getKey();
            boolean endpoint = key.startsWith("v1/instances/");
            if (!endpoint && !key.startsWith("v1/mdc/")) {
                continue;
            }
            // v1/instances/ns/comp/ep/{id} ; v1/mdc/ns/comp/ep/{id}[/suffix]
            String[] segments = key.split("/", -1);
            String keyId = segments.length > 5 ? segments[5] : "";
            if (!keyId.equalsIgnoreCase(hex)) {
                return "key " + key + " does not end in " + hex + " (hash_pod_name of the resource name)";
            }
            Long valueId = instanceId(record.getValue());
            if (valueId == null || valueId != expected) {
                return "record " + key + " carries instance_id " + valueId + ", expected " + expected;
            }
        }
        return null;
    }

    private static @Nullable Long instanceId(byte[] value) {
        try {
            JsonNode id = MAPPER.readTree(value).get("instance_id");
            if (id == null || !id.isIntegralNumber()) {
                return null;
            }
            BigInteger big = id.bigIntegerValue();
            return big.signum() < 0 || big.bitLength() > 64 ? null : big.longValue();
        } catch (java.io.IOException e) {
            return null;
        }
    }

    private static Map<String, String> linked(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.put(pairs[i], pairs[i + 1]);
        }
        return map;
    }
}
