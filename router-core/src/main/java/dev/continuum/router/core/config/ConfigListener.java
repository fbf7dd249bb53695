package dev.continuum.router.core.config;

/**
 * Told after each applied reload, on the reloading thread, in subscription order. {@code after} is
 * the config now returned by {@link ConfigStore#current()} (restart-only fields keep their running
 * values). A listener that throws is logged and does not stop the others or undo the swap.
 */
@FunctionalInterface
public interface ConfigListener {
    void onReload(RouterConfig before, RouterConfig after, ReloadPlan plan);
}
