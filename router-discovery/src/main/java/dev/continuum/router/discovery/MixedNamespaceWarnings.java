package dev.continuum.router.discovery;

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

    /** Logs the warnings for {@code fleet} and returns the lines logged (for tests). */
    List<String> check(FleetView fleet) {
        Map<Pair, EnumMap<WorkerRole, Integer>> rolesByPair = new LinkedHashMap<>();
        for (DynamoWorker worker : fleet.workers()) {
            String model = worker.model();
            if (model == null || worker.role() == WorkerRole.UNKNOWN) {
                continue;
            }
            rolesByPair.computeIfAbsent(new Pair(worker.namespace(), model), p -> new EnumMap<>(WorkerRole.class))
                    .merge(worker.role(), 1, Integer::sum);
        }
        Set<Pair> nowMixed = new HashSet<>();
        List<String> lines = new ArrayList<>();
        int suppressed = 0;
        for (Map.Entry<Pair, EnumMap<WorkerRole, Integer>> entry : rolesByPair.entrySet()) {
            EnumMap<WorkerRole, Integer> roles = entry.getValue();
            boolean isMixed = roles.containsKey(WorkerRole.AGGREGATED)
                    && (roles.containsKey(WorkerRole.PREFILL) || roles.containsKey(WorkerRole.DECODE));
            if (!isMixed) {
                continue;
            }
            Pair pair = entry.getKey();
            nowMixed.add(pair);
            if (mixed.contains(pair)) {
                continue;
            }
            if (lines.size() < MAX_PAIRS_PER_PUBLISH) {
                lines.add("Dynamo namespace '" + pair.namespace() + "' serves model '" + pair.model()
                        + "' from aggregated workers beside prefill/decode workers (" + counts(roles)
                        + "); a direct-mode frontend cannot serve this fleet as one model");
            } else {
                suppressed++;
            }
        }
        if (suppressed > 0) {
            lines.add(suppressed + " more (namespace, model) pairs became mixed in this update ("
                    + MAX_PAIRS_PER_PUBLISH + " shown)");
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

    private static String counts(EnumMap<WorkerRole, Integer> roles) {
        List<String> parts = new ArrayList<>();
        roles.forEach((role, count) -> parts.add(role.wireName() + "=" + count));
        return String.join(", ", parts);
    }
}
