package dev.continuum.router.discovery;

/**
 * Which routing signals the active source provides: {@code load} (workers advertise kv_metrics publishers)
 * and {@code capacity} (workers carry model cards with capacities).
 */
public record Signals(boolean load, boolean capacity) {
}
