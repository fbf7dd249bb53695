package dev.continuum.router.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The generated sample and the shipped templates must load as they are. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SampleConfigTest {
    @Test
    void theGeneratedSampleLoadsWithoutProblems() {
        LoadResult r = TestConfigs.load(SampleConfig.text());

        assertThat(r.problems()).isEmpty();
    }

    @Test
    void theGeneratedSampleShowsTheDefaults() {
        RouterConfig sample = TestConfigs.load(SampleConfig.text()).orThrow();

        assertThat(sample.server()).isEqualTo(ServerConfig.defaults());
        assertThat(sample.healthChecks()).isEqualTo(HealthCheckConfig.defaults());
        assertThat(sample.circuitBreaker()).isEqualTo(CircuitBreakerConfig.defaults());
        assertThat(sample.retry()).isEqualTo(RetryConfig.defaults());
        assertThat(sample.rateLimiting()).isEqualTo(RateLimitingConfig.defaults());
        assertThat(sample.apiKeys()).isEqualTo(ApiKeysConfig.defaults());
        assertThat(sample.admin()).isEqualTo(AdminConfig.disabled());
        assertThat(sample.disaggregatedServing()).isEqualTo(DisaggregatedServingConfig.defaults());
        assertThat(sample.logging()).isEqualTo(LoggingConfig.defaults());
        assertThat(sample.metrics()).isEqualTo(MetricsConfig.defaults());
        assertThat(sample.dynamo()).isEqualTo(DynamoConfig.disabled());
        assertThat(sample.selectionStrategy()).isEqualTo(SelectionStrategy.ROUND_ROBIN);
        assertThat(sample.backends()).singleElement().extracting(BackendConfig::weight, BackendConfig::role,
                BackendConfig::enabled, BackendConfig::internal).containsExactly(1, BackendRole.UNIFIED, true, false);
    }

    @Test
    void theQuickstartTemplateLoadsWithoutProblems() throws IOException {
        Path template = repositoryRoot().resolve("config-templates/quickstart.yaml");
        LoadResult r = TestConfigs.loader(template.getParent(), Map.of()).build().load(template);

        assertThat(r.problems()).isEmpty();
        RouterConfig c = r.orThrow();
        assertThat(c.server().bindAddresses()).containsExactly(new BindAddress.Tcp("127.0.0.1", 8080));
        assertThat(c.backends()).singleElement().satisfies(b -> {
            assertThat(b.name()).isEqualTo("local-upstream");
            assertThat(b.url()).hasToString("http://127.0.0.1:8000");
            assertThat(b.models()).containsExactly("demo-model");
            assertThat(b.type().speaksOpenAiWire()).isTrue();
        });
        assertThat(c.healthChecks().enabled()).isTrue();
        assertThat(c.admin().method()).isEqualTo(AdminConfig.AuthMethod.BEARER_TOKEN);
        assertThat(c.admin().token()).isEqualTo(Secret.of("change-me"));
        assertThat(TestConfigs.loader(template.getParent(), Map.of("CONTINUUM_ADMIN_TOKEN", "t0k")).build()
                .load(template).orThrow().admin().token()).isEqualTo(Secret.of("t0k"));
    }

    /** Walks up from the working directory to the folder that holds config-templates. */
    static Path repositoryRoot() throws IOException {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("config-templates"))) {
                return p;
            }
        }
        throw new IOException("no config-templates folder above " + Path.of("").toAbsolutePath());
    }
}
