package dev.continuum.router.discovery.kubernetes;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.core.logging.LogSafe;
import dev.continuum.router.discovery.DiscoveryCounters;
import dev.continuum.router.discovery.DiscoveryEventKind;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.discovery.kubernetes.PodClassifier.Held;
import dev.continuum.router.discovery.kubernetes.PodClassifier.PodClass;
import dev.continuum.router.discovery.kubernetes.PodClassifier.Ready;
import dev.continuum.router.discovery.kubernetes.PodClassifier.Refused;
import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Pods of one pass, by name, and the reducer records they stand for. A ready Pod with a model becomes the
 * two records an etcd worker registers: a {@code generate} endpoint under {@code v1/instances/} and a model card
 * under {@code v1/mdc/} whose {@code display_name} is the configured model and whose {@code worker_type} carries
 * the label-derived role, so the etcd reducer, the registry and the admin API need nothing Pod-specific.
 *
 * <p>Incremental: a Pod event re-derives the records of the (at most two) instance IDs it touched, so a burst
 * of events costs per event, not per fleet. Not thread-safe: the pass's own thread owns it.
 */
final class PodFleet {
    private static final Logger LOG = LoggerFactory.getLogger(PodFleet.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final int MAX_LOGGED_NAMES = 4;

    /** What the source remembers across the passes' relists, so "once" means once while a state lasts. */
    static final class Memory {
        final Set<String> refused = new HashSet<>();
        final Set<String> held = new HashSet<>();
        final Set<String> overCap = new HashSet<>();
        final Set<WorkerId> duplicates = new HashSet<>();
    }

    private final int maxPods;
    private final DiscoveryCounters counters;
    private final Memory memory;
    private final Map<String, PodClass> pods = new HashMap<>();
    /**
     * Pods refused at {@code maxPods}, oldest refusal first, with their latest class (a few small fields, at
     * most {@code maxPods} of them): admitted as soon as a held Pod goes, since a steady Pod sends no event.
     */
    private final LinkedHashMap<String, PodClass> waiting = new LinkedHashMap<>();
    /** Ready Pods by the ID their name hashes to; more than one name means all of them are refused. */
    private final Map<WorkerId, Set<String>> readyById = new HashMap<>();

    PodFleet(int maxPods, DiscoveryCounters counters, Memory memory) {
        this.maxPods = maxPods;
        this.counters = counters;
        this.memory = memory;
    }

    int size() {
        return pods.size();
    }

    /**
     * Records {@code name}'s new state ({@code next} null: deleted or gone from the selector) and returns the
     * reducer events for the IDs it touched.
     */
    List<DiscoveryEvent> update(String name, @Nullable PodClass next) {
        PodClass previous = pods.get(name);
        if (next != null && previous == null && pods.size() >= maxPods) {
            if (waiting.size() < maxPods || waiting.containsKey(name)) {
                waiting.put(name, next); // an update keeps its place
            }
            if (memory.overCap.add(name)) {
                counters.increment(DiscoveryEventKind.REFUSED);
                LOG.warn("Pod {} refused: {} Pods are held already (MAX_PODS); admitted when one goes",
                        LogSafe.escape(name), maxPods);
            }
            return List.of();
        }
        waiting.remove(name);
        memory.overCap.remove(name);
        WorkerId before = previous instanceof Ready r ? new WorkerId(r.dynamoNamespace(), r.instanceId()) : null;
        WorkerId after = next instanceof Ready r ? new WorkerId(r.dynamoNamespace(), r.instanceId()) : null;
        Map<String, byte[]> recordsBefore = new LinkedHashMap<>();
        recordsFor(before, recordsBefore);
        recordsFor(after, recordsBefore);

        if (before != null) {
            // A pod that was Ready is indexed under its ID.
            Set<String> names = Objects.requireNonNull(readyById.get(before));
            names.remove(name);
            if (names.isEmpty()) {
                readyById.remove(before);
            }
        }
        if (next == null) {
            pods.remove(name);
        } else {
            pods.put(name, next);
        }
        if (after != null) {
            readyById.computeIfAbsent(after, k -> new TreeSet<>()).add(name);
        }
        noteOnce(name, next);
        checkDuplicates(before);
        checkDuplicates(after);

        Map<String, byte[]> recordsAfter = new LinkedHashMap<>();
        recordsFor(before, recordsAfter);
        recordsFor(after, recordsAfter);
        List<DiscoveryEvent> events = new ArrayList<>();
        for (String key : recordsBefore.keySet()) {
            if (!recordsAfter.containsKey(key)) {
                events.add(new DiscoveryEvent.Delete(key));
            }
        }
        recordsAfter.forEach((key, value) -> {
            if (!Arrays.equals(value, recordsBefore.get(key))) {
                events.add(new DiscoveryEvent.Put(key, value));
            }
        });
        if (next == null && previous != null) {
            admitWaiting(events);
        }
        return events;
    }

    private void admitWaiting(List<DiscoveryEvent> events) {
        while (pods.size() < maxPods && !waiting.isEmpty()) {
            Map.Entry<String, PodClass> oldest = waiting.entrySet().iterator().next();
            waiting.remove(oldest.getKey());
            events.addAll(update(oldest.getKey(), oldest.getValue()));
        }
    }

    /** Every record the fleet stands for now: a pass's seed, or the resync after a relist. */
    List<DiscoveryEvent.Put> records() {
        Map<String, byte[]> all = new LinkedHashMap<>();
        for (WorkerId id : readyById.keySet()) {
            recordsFor(id, all);
        }
        List<DiscoveryEvent.Put> puts = new ArrayList<>(all.size());
        all.forEach((key, value) -> puts.add(new DiscoveryEvent.Put(key, value)));
        return puts;
    }

    private void noteOnce(String name, @Nullable PodClass next) {
        if (next instanceof Refused refused) {
            if (memory.refused.add(name)) {
                counters.increment(DiscoveryEventKind.REFUSED);
                LOG.warn("Pod {} refused: {}", LogSafe.escape(name), LogSafe.escape(refused.reason()));
            }
        } else {
            memory.refused.remove(name);
        }
        if (next instanceof Held held) {
            if (memory.held.add(name)) {
                LOG.debug("Pod {} is ready but its component {} has no model in dynamo.discovery.kubernetes.models; "
                        + "held, not published", LogSafe.escape(name), held.component() == null
                        ? "(no nvidia.com/dynamo-component)" : "\"" + LogSafe.escape(held.component()) + "\"");
            }
        } else {
            memory.held.remove(name);
        }
    }

    private void checkDuplicates(@Nullable WorkerId id) {
        if (id == null) {
            return;
        }
        Set<String> names = readyById.get(id);
        if (names != null && names.size() > 1) {
            if (memory.duplicates.add(id)) {
                counters.increment(DiscoveryEventKind.DUPLICATE);
                LOG.warn("ready Pods {} all hash to instance ID {} in namespace {}; every one is refused",
                        LogSafe.escape(names.stream().limit(MAX_LOGGED_NAMES).toList()),
                        Long.toHexString(id.instanceId()),
                        id.namespace());
            }
        } else {
            memory.duplicates.remove(id);
        }
    }

    /** The records of one ID: the two of its only ready Pod, none when no Pod or several claim it. */
    private void recordsFor(@Nullable WorkerId id, Map<String, byte[]> into) {
        if (id == null) {
            return;
        }
        Set<String> names = readyById.get(id);
        if (names == null || names.size() != 1) {
            return;
        }
        // Every name indexed as ready is a held Ready pod.
        Ready ready = (Ready) Objects.requireNonNull(pods.get(names.iterator().next()));
        String hex = Long.toHexString(ready.instanceId());
        // Label values cannot hold a slash, so the component is a single key segment as it is.
        String path = ready.dynamoNamespace() + "/" + ready.component() + "/generate/" + hex;
        ObjectNode endpoint = MAPPER.createObjectNode();
        endpoint.put("type", "Endpoint");
        endpoint.put("instance_id", ready.instanceId());
        endpoint.put("namespace", ready.dynamoNamespace());
        endpoint.put("component", ready.component());
        endpoint.put("endpoint", "generate");
        into.put("v1/instances/" + path, bytes(endpoint));
        ObjectNode card = MAPPER.createObjectNode();
        card.put("type", "Model");
        card.put("instance_id", ready.instanceId());
        card.put("component", ready.component());
        card.put("endpoint", "generate");
        ObjectNode cardJson = card.putObject("card_json");
        cardJson.put("display_name", ready.model());
        cardJson.put("worker_type", workerType(ready.role()));
        into.put("v1/mdc/" + path, bytes(card));
    }

    private static String workerType(WorkerRole role) {
        return switch (role) {
            case PREFILL -> "Prefill";
            case DECODE -> "Decode";
            case AGGREGATED, UNKNOWN -> "Aggregated";
        };
    }

    private static byte[] bytes(ObjectNode node) {
        return node.toString().getBytes(StandardCharsets.UTF_8);
    }
}
