package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReloadPlanTest {
    private static RouterConfig config(String yaml) {
        return TestConfigs.load(TestConfigs.ONE_BACKEND + yaml).orThrow();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        "server: {bind_address: \"127.0.0.1:9\"}                     | server.bind_address           | PROCESS_RESTART",
        "server: {bind_address: \"unix:/run/r.sock\", socket_mode: 0o600} | server.bind_address       | PROCESS_RESTART",
        "server: {workers: 3}                                        | server.workers                | PROCESS_RESTART",
        "server: {max_request_body_size: 1MiB}                       | server.max_request_body_size  | IMMEDIATE",
        "server: {request_timeout: 10s}                              | server.request_timeout        | IMMEDIATE",
        "server: {connection_pool_size: 5}                           | server.connection_pool_size   | IMMEDIATE",
        "selection_strategy: WeightedRoundRobin                      | selection_strategy            | IMMEDIATE",
        "health_checks: {interval: 5s}                               | health_checks                 | RESTART_SUBSYSTEM",
        "circuit_breaker: {failure_threshold: 2}                     | circuit_breaker               | IMMEDIATE",
        "retry: {max_attempts: 2}                                    | retry                         | IMMEDIATE",
        "rate_limiting: {whitelist: [\"10.0.0.0/8\"]}                | rate_limiting                 | IMMEDIATE",
        "api_keys: {api_keys: [{key: k}]}                            | api_keys                      | IMMEDIATE",
        "admin: {auth: {method: bearer_token, token: t}}             | admin                         | IMMEDIATE",
        "disaggregated_serving: {fallback_to_unified: false}         | disaggregated_serving         | IMMEDIATE",
        "logging: {level: debug}                                     | logging                       | IMMEDIATE",
        "metrics: {endpoint: /m}                                     | metrics                       | IMMEDIATE",
        "dynamo: {enabled: true}                                     | dynamo.enabled                | RESTART_SUBSYSTEM",
    })
    void classifiesEachSection(String yaml, String section, ReloadClass reloadClass) {
        ReloadPlan plan = ReloadPlanner.plan(config(""), config(yaml), List.of());

        assertThat(plan.changes()).contains(new ReloadPlan.Change(section, reloadClass));
        assertThat(plan.reloadClassOf(section)).contains(reloadClass);
    }

    @Test
    void listsBackendsWhenOneChanges() {
        ReloadPlan plan = ReloadPlanner.plan(config(""),
                TestConfigs.load("backends: [{name: a, url: \"http://127.0.0.1:8000\", weight: 3}]").orThrow(), List.of());

        assertThat(plan.changes()).containsExactly(new ReloadPlan.Change("backends", ReloadClass.IMMEDIATE));
        assertThat(plan.highest()).contains(ReloadClass.IMMEDIATE);
    }

    @Test
    void findsNothingBetweenEqualConfigs() {
        assertThat(ReloadPlanner.plan(config("logging: {level: debug}"), config("logging: {level: debug}"), List.of())
                .isEmpty()).isTrue();
    }

    @Test
    void keepsRunningValuesForRestartOnlyFieldsInTheEffectiveConfig() {
        RouterConfig running = config("server: {bind_address: \"127.0.0.1:1\", workers: 1, idle_timeout: 5s}");
        RouterConfig file = config("server: {bind_address: \"unix:/run/r.sock\", socket_mode: 0o600, workers: 8,"
                + " idle_timeout: 9s}\nlogging: {level: debug}");

        RouterConfig effective = ReloadPlanner.effective(running, file);

        assertThat(effective.server().bindAddresses()).isEqualTo(running.server().bindAddresses());
        assertThat(effective.server().socketMode()).isNull();
        assertThat(effective.server().workers()).isEqualTo(1);
        assertThat(effective.server().idleTimeout()).isEqualTo(file.server().idleTimeout());
        assertThat(effective.logging()).isEqualTo(file.logging());
        assertThat(ReloadPlanner.plan(running, file, List.of()).pendingRestart()).extracting(ReloadPlan.Change::section)
                .containsExactly("server.bind_address", "server.socket_mode", "server.workers");
    }
}
