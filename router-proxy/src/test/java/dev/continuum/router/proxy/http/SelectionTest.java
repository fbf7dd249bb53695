package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.SelectionStrategy;
import dev.continuum.router.testing.TestUpstream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SelectionTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").upstream("c").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private final TestUpstream c = harness.upstream("c");
    private RouterHarness router;

    @Test
    void weightedRoundRobinDistributionIsExact() {
        ConfigBuilder cfg = ConfigBuilder.create()
                .backend(ConfigBuilder.backendConfig("a", a.baseUrl(), 5, null, null, true, false, "m"))
                .backend(ConfigBuilder.backendConfig("b", b.baseUrl(), 3, null, null, true, false, "m"))
                .backend(ConfigBuilder.backendConfig("c", c.baseUrl(), 2, null, null, true, false, "m"));
        cfg.strategy = SelectionStrategy.WEIGHTED_ROUND_ROBIN;
        router = harness.start(cfg.build());

        for (int i = 0; i < 100; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }

        assertThat(a.completionCount()).isEqualTo(50);
        assertThat(b.completionCount()).isEqualTo(30);
        assertThat(c.completionCount()).isEqualTo(20);
    }

    @Test
    void roundRobinCyclesOverTheBackendsThatServeTheModel() {
        router = harness.start(ConfigBuilder.create()
                .backend("a", a.baseUrl(), "m").backend("b", b.baseUrl()).backend("c", c.baseUrl(), "other").build());

        for (int i = 0; i < 10; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }

        assertThat(a.completionCount()).isEqualTo(5);
        assertThat(b.completionCount()).isEqualTo(5);
        assertThat(c.completionCount()).isZero();
    }
}
