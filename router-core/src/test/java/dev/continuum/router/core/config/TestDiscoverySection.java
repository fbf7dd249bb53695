package dev.continuum.router.core.config;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** A stand-in for a later module's {@code dynamo.discovery}, exercising the {@link DynamoSection} contract. */
final class TestDiscoverySection implements DynamoSection<TestDiscoverySection.Discovery> {
    record Discovery(List<String> endpoints, Duration backoff, @Nullable Auth auth) {
        Discovery {
            endpoints = List.copyOf(endpoints);
        }

        @Nullable Secret password() {
            return auth == null ? null : auth.password();
        }
    }

    record Auth(Secret password) {
    }

    @Override
    public String key() {
        return "discovery";
    }

    @Override
    public Class<Discovery> type() {
        return Discovery.class;
    }

    @Override
    public Discovery defaults() {
        return new Discovery(List.of(), Duration.ofMillis(500), null);
    }

    @Override
    public @Nullable Discovery bind(ConfigNode node, Problems problems) {
        List<String> endpoints = node.get("endpoints").asStringList();
        Duration backoff = node.get("backoff").asDuration(Duration.ofMillis(100), Duration.ofMillis(100),
                Duration.ofMinutes(5));
        if (node.isPresent() && !node.get("backoff").isPresent()) {
            backoff = defaults().backoff();
        } else if (!node.isPresent()) {
            backoff = defaults().backoff();
        }
        Secret password = node.get("auth").get("password").asSecret();
        return new Discovery(endpoints, backoff, password == null ? null : new Auth(password));
    }

    @Override
    public void crossCheck(Discovery value, RouterConfig config, Problems problems) {
        if (config.dynamo().enabled() && value.endpoints().isEmpty()) {
            problems.error("dynamo.discovery.endpoints", "[] (expected: at least one endpoint when dynamo.enabled)");
        }
    }

    @Override
    public ReloadClass reloadClass(Discovery before, Discovery after) {
        return before.endpoints().equals(after.endpoints()) ? ReloadClass.IMMEDIATE : ReloadClass.RESTART_SUBSYSTEM;
    }
}
