package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeContext;
import dev.continuum.router.core.config.internal.TreeNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Lays the environment and then the command line over the file's tree, before binding, so an
 * overridden value is validated by the same rules and reported at the same path (its location names
 * the variable or the command line). Blank variables count as unset.
 */
final class EnvOverrides {
    static final String BIND_ADDRESS = "CONTINUUM_BIND_ADDRESS";
    static final String LOG_LEVEL = "CONTINUUM_LOG_LEVEL";
    static final String RUST_LOG = "RUST_LOG";
    static final String METRICS_ENABLED = "METRICS_ENABLED";
    static final String METRICS_ENDPOINT = "METRICS_ENDPOINT";
    static final String COMMAND_LINE = "command line";

    private EnvOverrides() {
    }

    static void apply(TreeNode root, TreeContext ctx, Map<String, String> env, ConfigOverrides cli) {
        String binds = value(env, BIND_ADDRESS);
        if (binds != null) {
            put(root, ctx, "server.bind_address", splitList(binds), origin(BIND_ADDRESS));
        }
        String level = value(env, LOG_LEVEL);
        if (level != null) {
            put(root, ctx, "logging.level", level, origin(LOG_LEVEL));
        } else {
            String rustLog = value(env, RUST_LOG);
            String mapped = rustLog == null ? null : fromRustLog(rustLog, ctx);
            if (mapped != null) {
                put(root, ctx, "logging.level", mapped, origin(RUST_LOG));
            }
        }
        String metricsEnabled = value(env, METRICS_ENABLED);
        if (metricsEnabled != null) {
            put(root, ctx, "metrics.enabled", metricsEnabled, origin(METRICS_ENABLED));
        }
        String metricsEndpoint = value(env, METRICS_ENDPOINT);
        if (metricsEndpoint != null) {
            put(root, ctx, "metrics.endpoint", metricsEndpoint, origin(METRICS_ENDPOINT));
        }
        if (cli.bindAddresses() != null) {
            put(root, ctx, "server.bind_address", cli.bindAddresses(), COMMAND_LINE);
        }
        if (cli.logLevel() != null) {
            put(root, ctx, "logging.level", cli.logLevel(), COMMAND_LINE);
        }
        if (cli.metricsEnabled() != null) {
            put(root, ctx, "metrics.enabled", cli.metricsEnabled().toString(), COMMAND_LINE);
        }
        if (cli.metricsEndpoint() != null) {
            put(root, ctx, "metrics.endpoint", cli.metricsEndpoint(), COMMAND_LINE);
        }
    }

    private static String origin(String variable) {
        return "environment variable " + variable;
    }

    private static @Nullable String value(Map<String, String> env, String name) {
        String v = env.get(name);
        return v == null || v.isBlank() ? null : v.trim();
    }

    static List<String> splitList(String text) {
        List<String> out = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
    }

    private static void put(TreeNode root, TreeContext ctx, String path, String value, String origin) {
        root.override(Arrays.asList(path.split("\\.")), TreeNode.literal(ctx, path, origin, value));
    }

    private static void put(TreeNode root, TreeContext ctx, String path, List<String> values, String origin) {
        root.override(Arrays.asList(path.split("\\.")), TreeNode.literalList(ctx, path, origin, values));
    }

    /**
     * RUST_LOG holds env_logger filter directives ({@code info,hyper=warn,my_crate::x=trace}). Only a
     * bare level maps to the root level here (the last one wins, as in env_logger); per-target
     * directives are dropped with a warning.
     */
    static @Nullable String fromRustLog(String rustLog, TreeContext ctx) {
        String level = null;
        List<String> ignored = new ArrayList<>();
        for (String directive : rustLog.split(",")) {
            String d = directive.trim();
            if (d.isEmpty()) {
                continue;
            }
            if (d.indexOf('=') < 0 && MiscBinders.level(d) != null) {
                level = d;
            } else {
                ignored.add(d);
            }
        }
        if (level == null) {
            ctx.problems().warning("logging.level", "RUST_LOG=" + Problems.render(rustLog)
                    + " has no bare level this build can use (expected: trace, debug, info, warn or error); ignored");
        } else if (!ignored.isEmpty()) {
            ctx.problems().warning("logging.level", "RUST_LOG directives " + ignored
                    + " are not supported by this build; using level " + level);
        }
        return level;
    }
}
