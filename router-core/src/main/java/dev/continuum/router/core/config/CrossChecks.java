package dev.continuum.router.core.config;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** The checks that need more than one section, run after every section was bound. */
final class CrossChecks {
    private CrossChecks() {
    }

    static void run(RouterConfig config, BindContext ctx) {
        Problems problems = ctx.problems;
        backendReferences(config, ctx);
        backends(config, ctx);
        disaggregated(config, ctx);
        PlaceholderSecrets.check(config, problems);
        RateLimitingConfig rl = config.rateLimiting();
        if (rl.enabled() && rl.perClient() == null && rl.perBackend() == null && rl.perApiKey() == null
                && rl.global() == null) {
            problems.warning("rate_limiting.enabled", "true but no limit is set under rate_limiting.limits; "
                    + "nothing is limited");
        }
        for (DynamoSection<?> section : ctx.sections) {
            crossCheck(section, config, problems);
        }
    }

    private static <T> void crossCheck(DynamoSection<T> section, RouterConfig config, Problems problems) {
        if (!config.dynamo().sections().containsKey(section.key())) {
            return; // binding failed and was reported; checking its defaults would only add noise
        }
        try {
            section.crossCheck(config.dynamo().section(section), config, problems);
        } catch (RuntimeException e) {
            problems.error("dynamo." + section.key(), "cross-check failed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static void backendReferences(RouterConfig config, BindContext ctx) {
        Set<String> names = config.backends().stream().map(BackendConfig::name).collect(Collectors.toSet());
        for (BindContext.BackendReference ref : ctx.backendReferences) {
            if (!names.contains(ref.name())) {
                ref.node().invalid("the name of a configured backend");
            }
        }
    }

    private static void backends(RouterConfig config, BindContext ctx) {
        List<BackendConfig> backends = config.backends();
        if (backends.stream().noneMatch(BackendConfig::enabled)) {
            ctx.problems.warning("backends", "no enabled backend; every /v1 request will get 503");
        }
        Map<String, String> urls = new HashMap<>();
        for (int i = 0; i < backends.size(); i++) {
            BackendConfig b = backends.get(i);
            String path = ctx.backendPaths.get(i);
            String first = urls.putIfAbsent(b.url().toString(), path);
            if (first != null && !b.url().getHost().equals("invalid.invalid")) {
                ctx.problems.warning(path + ".url", Problems.render(b.url().toString()) + " is also the url of "
                        + first + "; both entries reach one server");
            }
            if (!config.disaggregatedServing().enabled() && b.role() != BackendRole.UNIFIED) {
                ctx.problems.warning(path + ".role", Problems.render(b.role().yamlName())
                        + " is ignored while disaggregated_serving is disabled; the backend serves requests as unified");
            }
        }
    }

    private static void disaggregated(RouterConfig config, BindContext ctx) {
        DisaggregatedServingConfig ds = config.disaggregatedServing();
        if (!ds.enabled()) {
            return;
        }
        // With a Dynamo shim (dynamo.shim), prefill and decode happen inside the direct-mode frontend, whose
        // replicas are ordinary role: unified backends: the shim example sets fallback_to_unified: false
        // (docs/decisions.md).
        if (config.dynamo().enabled() && config.dynamo().find(FrontendDisaggregation.class).isPresent()) {
            return;
        }
        boolean prefill = config.backends().stream().anyMatch(b -> b.enabled() && b.role() == BackendRole.PREFILL);
        boolean decode = config.backends().stream().anyMatch(b -> b.enabled() && b.role() == BackendRole.DECODE);
        if (prefill && decode) {
            return;
        }
        String missing = !prefill && !decode ? "prefill or decode" : !prefill ? "prefill" : "decode";
        if (ds.fallbackToUnified()) {
            ctx.problems.warning("disaggregated_serving.enabled", "no enabled backend has role " + missing
                    + "; requests are served unified (fallback_to_unified)");
        } else {
            ctx.problems.error("disaggregated_serving.enabled", "true (expected: an enabled backend with role prefill"
                    + " and one with role decode, or fallback_to_unified: true; none has role " + missing + ")");
        }
    }
}
