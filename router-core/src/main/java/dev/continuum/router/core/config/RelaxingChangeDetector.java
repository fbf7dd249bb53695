package dev.continuum.router.core.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Finds the reload changes that open the router up or empty it: client-key enforcement switched off,
 * admin authentication switched off, every backend removed, Dynamo switched off. Such a change may be
 * intended, but it is also what a truncated or half-written file looks like, so the store logs each
 * one at WARN with its field path (and still applies it: a valid config is the operator's call).
 */
final class RelaxingChangeDetector {
    private RelaxingChangeDetector() {
    }

    static List<Problem> detect(RouterConfig before, RouterConfig after) {
        List<Problem> found = new ArrayList<>();
        if (before.apiKeys().mode() == ApiKeysConfig.Mode.BLOCKING
                && after.apiKeys().mode() != ApiKeysConfig.Mode.BLOCKING) {
            found.add(warning("api_keys.mode", "blocking -> " + name(after.apiKeys().mode())
                    + ": client API keys are no longer enforced (requests without a key are let through)"));
        }
        if (adminOpen(after) && !adminOpen(before)) {
            String was = before.admin().enabled() ? name(before.admin().method()) : "admin API disabled";
            found.add(warning("admin.auth.method", was + " -> none: the admin API no longer asks for credentials"));
        }
        if (!before.backends().isEmpty() && after.backends().isEmpty()) {
            found.add(warning("backends", before.backends().size() + " -> 0: every backend was removed"));
        }
        if (before.dynamo().enabled() && !after.dynamo().enabled()) {
            found.add(warning("dynamo.enabled", "true -> false: Dynamo discovery and worker pinning stop"));
        }
        return found;
    }

    private static boolean adminOpen(RouterConfig config) {
        return config.admin().enabled() && config.admin().method() == AdminConfig.AuthMethod.NONE;
    }

    private static String name(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    private static Problem warning(String path, String message) {
        return new Problem(Problem.Severity.WARNING, path, message);
    }
}
