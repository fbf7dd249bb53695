package dev.continuum.router.core.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/** Diffs two configs into a {@link ReloadPlan}, and applies the effective-config rule. */
final class ReloadPlanner {
    private record Field<S>(String name, Function<S, Object> value, ReloadClass reloadClass) {
    }

    /** Listener sockets and the event-loop size exist once per process. */
    private static final List<Field<ServerConfig>> SERVER_FIELDS = List.of(
            new Field<>("server.bind_address", ServerConfig::bindAddresses, ReloadClass.PROCESS_RESTART),
            new Field<>("server.socket_mode", s -> Objects.toString(s.socketMode()), ReloadClass.PROCESS_RESTART),
            new Field<>("server.workers", ServerConfig::workers, ReloadClass.PROCESS_RESTART),
            new Field<>("server.connection_pool_size", ServerConfig::connectionPoolSize, ReloadClass.IMMEDIATE),
            new Field<>("server.max_request_body_size", ServerConfig::maxRequestBodySize, ReloadClass.IMMEDIATE),
            new Field<>("server.max_header_size", ServerConfig::maxHeaderSize, ReloadClass.IMMEDIATE),
            new Field<>("server.max_initial_line_length", ServerConfig::maxInitialLineLength, ReloadClass.IMMEDIATE),
            new Field<>("server.request_timeout", ServerConfig::requestTimeout, ReloadClass.IMMEDIATE),
            new Field<>("server.connect_timeout", ServerConfig::connectTimeout, ReloadClass.IMMEDIATE),
            new Field<>("server.header_read_timeout", ServerConfig::headerReadTimeout, ReloadClass.IMMEDIATE),
            new Field<>("server.idle_timeout", ServerConfig::idleTimeout, ReloadClass.IMMEDIATE),
            new Field<>("server.shutdown_grace_period", ServerConfig::shutdownGracePeriod, ReloadClass.IMMEDIATE),
            new Field<>("server.body_read_timeout", ServerConfig::bodyReadTimeout, ReloadClass.IMMEDIATE),
            new Field<>("server.max_buffered_request_size", s -> Objects.toString(s.maxBufferedRequestSize()),
                    ReloadClass.IMMEDIATE),
            new Field<>("server.max_connections", ServerConfig::maxConnections, ReloadClass.IMMEDIATE),
            new Field<>("server.shutdown_quiet_period", ServerConfig::shutdownQuietPeriod, ReloadClass.IMMEDIATE));

    private static final List<Field<RouterConfig>> SECTIONS = List.of(
            new Field<>("backends", RouterConfig::backends, ReloadClass.IMMEDIATE),
            new Field<>("selection_strategy", RouterConfig::selectionStrategy, ReloadClass.IMMEDIATE),
            new Field<>("health_checks", RouterConfig::healthChecks, ReloadClass.RESTART_SUBSYSTEM),
            new Field<>("circuit_breaker", RouterConfig::circuitBreaker, ReloadClass.IMMEDIATE),
            new Field<>("retry", RouterConfig::retry, ReloadClass.IMMEDIATE),
            new Field<>("rate_limiting", RouterConfig::rateLimiting, ReloadClass.IMMEDIATE),
            new Field<>("api_keys", RouterConfig::apiKeys, ReloadClass.IMMEDIATE),
            new Field<>("admin", RouterConfig::admin, ReloadClass.IMMEDIATE),
            new Field<>("disaggregated_serving", RouterConfig::disaggregatedServing, ReloadClass.IMMEDIATE),
            new Field<>("logging", RouterConfig::logging, ReloadClass.IMMEDIATE),
            new Field<>("metrics", RouterConfig::metrics, ReloadClass.IMMEDIATE),
            new Field<>("timeouts", RouterConfig::timeouts, ReloadClass.IMMEDIATE),
            new Field<>("fallback", RouterConfig::fallback, ReloadClass.IMMEDIATE),
            new Field<>("consistent_hash", RouterConfig::consistentHash, ReloadClass.IMMEDIATE),
            new Field<>("global_prompts", RouterConfig::globalPrompts, ReloadClass.IMMEDIATE),
            new Field<>("dynamo.enabled", c -> c.dynamo().enabled(), ReloadClass.RESTART_SUBSYSTEM));

    private ReloadPlanner() {
    }

    static ReloadPlan plan(RouterConfig before, RouterConfig after, List<DynamoSection<?>> sections) {
        List<ReloadPlan.Change> changes = new ArrayList<>();
        for (Field<ServerConfig> f : SERVER_FIELDS) {
            if (!Objects.equals(f.value().apply(before.server()), f.value().apply(after.server()))) {
                changes.add(new ReloadPlan.Change(f.name(), f.reloadClass()));
            }
        }
        for (Field<RouterConfig> f : SECTIONS) {
            if (!Objects.equals(f.value().apply(before), f.value().apply(after))) {
                changes.add(new ReloadPlan.Change(f.name(), f.reloadClass()));
            }
        }
        for (DynamoSection<?> section : sections) {
            ReloadClass rc = dynamoChange(section, before, after);
            if (rc != null) {
                changes.add(new ReloadPlan.Change("dynamo." + section.key(), rc));
            }
        }
        return new ReloadPlan(changes);
    }

    private static <T> @org.jspecify.annotations.Nullable ReloadClass dynamoChange(DynamoSection<T> section, RouterConfig before, RouterConfig after) {
        T b = before.dynamo().section(section);
        T a = after.dynamo().section(section);
        if (Objects.equals(b, a)) {
            return null;
        }
        try {
            return Objects.requireNonNull(section.reloadClass(b, a), "reloadClass");
        } catch (RuntimeException e) {
            return ReloadClass.RESTART_SUBSYSTEM; // the safe choice when the owner cannot say
        }
    }

    /**
     * The config subscribers get: {@code after}, except that each field whose change needs a process
     * restart keeps its running value, so what is reported always matches what is running.
     */
    static RouterConfig effective(RouterConfig before, RouterConfig after) {
        ServerConfig b = before.server();
        ServerConfig a = after.server();
        ServerConfig server = new ServerConfig(b.bindAddresses(), b.socketMode(), b.workers(), a.connectionPoolSize(),
                a.maxRequestBodySize(), a.maxHeaderSize(), a.maxInitialLineLength(), a.requestTimeout(),
                a.connectTimeout(), a.headerReadTimeout(), a.idleTimeout(), a.shutdownGracePeriod(),
                a.bodyReadTimeout(), a.maxBufferedRequestSize(), a.maxConnections(), a.shutdownQuietPeriod());
        return after.withServer(server);
    }
}
