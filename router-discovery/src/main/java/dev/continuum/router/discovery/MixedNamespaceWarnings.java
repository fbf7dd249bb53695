package dev.continuum.router.discovery;

import dev.continuum.router.core.logging.LogSafe;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Warns when a published view first makes a namespace serve one model from aggregated workers beside
 * prefill or decode workers: Dynamo's direct-mode frontend picks one worker set at random per request and
 * refuses instance IDs from the other, so such a fleet cannot be served as configured. One warning per
 * (namespace, model) while it stays mixed; one publish names at most {@link #MAX_PAIRS_PER_PUBLISH} pairs
 * (model names are fleet-authored) and summarizes the rest in one line. Called under the registry's writer
 * lock only.
 */
final class MixedNamespaceWarnings {
    static final int MAX_PAIRS_PER_PUBLISH = 8;
    private static final Logger LOG = LoggerFactory.getLogger(MixedNamespaceWarnings.class);

    private record Pair(String namespace, String model) {
    }

    private final Set<Pair> mixed = new HashSet<>();

    /**
     * Logs the warnings for {@code fleet} and returns the lines logged (for tests). One pass over the workers
     * collecting a role bit mask per pair; counts are gathered only for pairs that newly became mixed.
     */
    List<String> check(FleetView fleet) {
        Map<Pair, int[]> rolesByPair = new LinkedHashMap<>();
        String lastNamespace = null;
        String lastModel = null;
        int[] lastMask = null;
        for (DynamoWorker worker : fleet.workers()) {
            String model = worker.model();
            if (model == null || worker.role() == WorkerRole.UNKNOWN) {
                continue;
            }
            // Workers come sorted by namespace; neighbours often share a model, so skip the map lookup then.
            if (lastMask == null || !model.equals(lastModel) || !worker.namespace().equals(lastNamespace)) {
                lastNamespace = worker.namespace();
                lastModel = model;
                lastMask = rolesByPair.computeIfAbsent(new Pair(lastNamespace, model), p -> new int[1]);
            }
            lastMask[0] |= 1 << worker.role().ordinal();
        }
        Set<Pair> nowMixed = new HashSet<>();
        List<Pair> newlyMixed = new ArrayList<>();
        int aggregated = 1 << WorkerRole.AGGREGATED.ordinal();
        int disaggregated = 1 << WorkerRole.PREFILL.ordinal() | 1 << WorkerRole.DECODE.ordinal();
        for (Map.Entry<Pair, int[]> entry : rolesByPair.entrySet()) {
            int mask = entry.getValue()[0];
            if ((mask & aggregated) != 0 && (mask & disaggregated) != 0) {
                nowMixed.add(entry.getKey());
                if (!mixed.contains(entry.getKey())) {
                    newlyMixed.add(entry.getKey());
                }
            }
        }
        List<String> lines = new ArrayList<>();
        for (Pair pair : newlyMixed.subList(0, Math.min(MAX_PAIRS_PER_PUBLISH, newlyMixed.size()))) {
            lines.add("Dynamo namespace '" + pair.namespace() + "' serves model '" + LogSafe.escape(pair.model())
                    + "' from aggregated workers beside prefill/decode workers (" + counts(fleet, pair)
                    + "); a direct-mode frontend cannot serve this fleet as one model");
        }
        if (newlyMixed.size() > MAX_PAIRS_PER_PUBLISH) {
            lines.add((newlyMixed.size() - MAX_PAIRS_PER_PUBLISH) + " more (namespace, model) pairs became mixed in "
                    + "this update (" + MAX_PAIRS_PER_PUBLISH + " shown)");
        }
        mixed.clear();
        mixed.addAll(nowMixed);
        lines.forEach(LOG::warn);
        return lines;
    }

    /** A namespaces edit removed some namespaces: forget them so they warn again if re-added. */
    void forgetNamespacesOtherThan(Collection<String> namespaces) {
        mixed.removeIf(pair -> !namespaces.contains(pair.namespace()));
    }

    private static String counts(FleetView fleet, Pair pair) {
        EnumMap<WorkerRole, Integer> roles = new EnumMap<>(WorkerRole.class);
        for (DynamoWorker worker : fleet.workers()) {
            if (worker.namespace().equals(pair.namespace()) && pair.model().equals(worker.model())) {
                roles.merge(worker.role(), 1, Integer::sum);
            }
        }
        List<String> parts = new ArrayList<>();
        roles.forEach((role, count) -> parts.add(role.wireName() + "=" + count));
        return String.join(", ", parts);
    }
}
