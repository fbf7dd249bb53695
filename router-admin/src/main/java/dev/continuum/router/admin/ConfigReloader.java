package dev.continuum.router.admin;

import dev.continuum.router.core.config.ReloadResult;

/** Re-reads and applies the config file, exactly as SIGHUP and the file watcher do. */
@FunctionalInterface
public interface ConfigReloader {
    ReloadResult reload(String trigger);
}
