package dev.continuum.router.core.config;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * What changed between two configs and how each change takes effect. Sections are named by their
 * dotted YAML path: {@code server.bind_address}, {@code backends}, {@code dynamo.discovery}, ...
 */
public record ReloadPlan(List<Change> changes) {
    /** One changed section and its reload class. */
    public record Change(String section, ReloadClass reloadClass) {
    }

    public ReloadPlan {
        changes = List.copyOf(changes);
    }

    public static ReloadPlan empty() {
        return new ReloadPlan(List.of());
    }

    public boolean isEmpty() {
        return changes.isEmpty();
    }

    public boolean changed(String section) {
        return changes.stream().anyMatch(c -> c.section().equals(section));
    }

    public Optional<ReloadClass> reloadClassOf(String section) {
        return changes.stream().filter(c -> c.section().equals(section)).map(Change::reloadClass).findFirst();
    }

    /** The dearest class among the changes, if any. */
    public Optional<ReloadClass> highest() {
        return changes.stream().map(Change::reloadClass).max(Comparator.naturalOrder());
    }

    /** Changes that only a process restart applies (the running process keeps the old values). */
    public List<Change> pendingRestart() {
        return changes.stream().filter(c -> c.reloadClass() == ReloadClass.PROCESS_RESTART).toList();
    }
}
