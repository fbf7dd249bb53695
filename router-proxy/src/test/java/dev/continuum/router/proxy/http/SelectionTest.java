package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.SelectionStrategy;
import dev.continuum.router.testing.TestUpstream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SelectionTest {
    private final TestUpstream a = TestUpstream.start("a");
    private final TestUpstream b = TestUpstream.start("b");
    private final TestUpstream c = TestUpstream.start("c");
    private RouterHarness router;

    @AfterEach
    void tearDown() {
        if (router != null) {
            router.close();
        }
        a.close();
        b.close();
        c.close();
    }

    @Test
    void weightedRoundRobinDistributionIsExact() {
        ConfigBuilder cfg = ConfigBuilder.create()
                .backend(ConfigBuilder.backendConfig("a", a.baseUrl(), 5, null, null, true, false, "m"))
                .backend(ConfigBuilder.backendConfig("b", b.baseUrl(), 3, null, null, true, false, "m"))
                .backend(ConfigBuilder.backendConfig("c", c.baseUrl(), 2, null, null, true, false, "m"));
        cfg.strategy = SelectionStrategy.WEIGHTED_ROUND_ROBIN;
        router = RouterHarness.start(cfg.build());

        for (int i = 0; i < 100; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }

        assertThat(a.completionCount()).isEqualTo(50);
        assertThat(b.completionCount()).isEqualTo(30);
        assertThat(c.completionCount()).isEqualTo(20);
    }

    @Test
    void roundRobinCyclesOverTheBackendsThatServeTheModel() {
        router = RouterHarness.start(ConfigBuilder.create()
                .backend("a", a.baseUrl(), "m").backend("b", b.baseUrl()).backend("c", c.baseUrl(), "other").build());

        for (int i = 0; i < 10; i++) {
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
        }

        assertThat(a.completionCount()).isEqualTo(5);
        assertThat(b.completionCount()).isEqualTo(5);
        assertThat(c.completionCount()).isZero();
    }
}
