package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import dev.continuum.router.testing.TestUpstream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * What {@link RouterExtension} owns and when it closes it: the nested classes below are real test classes run
 * through the JUnit Platform launcher (they are enabled only while this class launches them), recording the
 * ports of what they started; afterwards each port must refuse connections exactly when the extension's scope
 * says it has ended.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RouterExtensionTest {
    private static volatile boolean launching;
    /** Ports recorded by the nested classes, by label. */
    private static final Map<String, Integer> PORTS = new ConcurrentHashMap<>();
    /** What the nested classes saw while running (open or refused), in order. */
    private static final List<String> SEEN = new CopyOnWriteArrayList<>();

    static boolean launching() {
        return launching;
    }

    private static TestExecutionSummary launch(Class<?> testClass) {
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launching = true;
        try {
            LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass))
                    .build(), listener);
        } finally {
            launching = false;
        }
        return listener.getSummary();
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (ConnectException e) {
            return false;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void anInstanceFieldClosesTheUpstreamsAndTheRouterAfterEachTest() {
        PORTS.clear();
        TestExecutionSummary summary = launch(PerTest.class);

        assertThat(summary.getTestsSucceededCount()).isEqualTo(2);
        assertThat(summary.getTotalFailureCount()).isZero();
        // Each test had its own upstreams (a new instance, a new extension), all closed by now.
        assertThat(PORTS).containsKeys("first a", "first b", "first router", "second a", "second b");
        assertThat(PORTS.get("first a")).isNotEqualTo(PORTS.get("second a"));
        assertThat(PORTS.values()).noneMatch(RouterExtensionTest::accepts);
    }

    @ParameterizedTest
    @ValueSource(classes = {StaticField.class, PerClassInstanceField.class})
    void aClassScopedFieldKeepsTheUpstreamsAndTheClassRouterButClosesATestsRouterAfterIt(Class<?> testClass) {
        PORTS.clear();
        SEEN.clear();
        TestExecutionSummary summary = launch(testClass);

        assertThat(summary.getTestsSucceededCount()).isEqualTo(2);
        assertThat(summary.getTotalFailureCount()).isZero();
        // In the second test: the upstream and the class's router still open, the first test's router closed.
        assertThat(SEEN).containsExactly("upstream open", "class router open", "test router refused");
        assertThat(PORTS).containsKeys("a", "class router", "test router");
        assertThat(PORTS.values()).noneMatch(RouterExtensionTest::accepts); // and everything after the class
    }

    @Test
    void anUnknownUpstreamNameIsRefusedWithTheNamesThereAre() throws Exception {
        RouterExtension harness = RouterExtension.builder().upstream("a").build();
        try {
            assertThatThrownBy(() -> harness.upstream("b")).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'b'").hasMessageContaining("[a]");
            assertThatThrownBy(() -> RouterExtension.builder().upstream("a").upstream("a"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("named twice");
        } finally {
            harness.afterAll(null); // as JUnit would after the class: closes the upstream
        }
        assertThat(accepts(harness.upstream("a").port())).isFalse();
    }

    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    @EnabledIf("dev.continuum.router.proxy.http.RouterExtensionTest#launching")
    static class PerTest {
        @RegisterExtension
        final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
        private final TestUpstream a = harness.upstream("a");

        @Test
        @Order(1)
        void first() {
            RouterHarness router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
            assertThat(router.chat("m").statusCode()).isEqualTo(200);
            PORTS.put("first a", a.port());
            PORTS.put("first b", harness.upstream("b").port());
            PORTS.put("first router", router.port);
        }

        @Test
        @Order(2)
        void second() {
            assertThat(accepts(PORTS.get("first router"))).isFalse();
            assertThat(accepts(PORTS.get("first a"))).isFalse();
            PORTS.put("second a", a.port());
            PORTS.put("second b", harness.upstream("b").port());
        }
    }

    /** A router started in {@code @BeforeAll} and one in the first test, checked from the second. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    abstract static class ClassScoped {
        private RouterHarness classRouter;

        abstract RouterExtension harness();

        @BeforeAll
        void start() {
            TestUpstream a = harness().upstream("a");
            classRouter = harness().start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
            PORTS.put("class router", classRouter.port);
            PORTS.put("a", a.port());
        }

        @Test
        @Order(1)
        void first() {
            RouterHarness own = harness().start(ConfigBuilder.create()
                    .backend("a", harness().upstream("a").baseUrl(), "m").build());
            assertThat(own.chat("m").statusCode()).isEqualTo(200);
            PORTS.put("test router", own.port);
        }

        @Test
        @Order(2)
        void second() {
            SEEN.add(accepts(harness().upstream("a").port()) ? "upstream open" : "upstream refused");
            SEEN.add(accepts(classRouter.port) ? "class router open" : "class router refused");
            SEEN.add(accepts(PORTS.get("test router")) ? "test router open" : "test router refused");
            assertThat(classRouter.chat("m").statusCode()).isEqualTo(200);
        }
    }

    @EnabledIf("dev.continuum.router.proxy.http.RouterExtensionTest#launching")
    static class StaticField extends ClassScoped {
        @RegisterExtension
        static final RouterExtension HARNESS = RouterExtension.builder().upstream("a").build();

        @Override
        RouterExtension harness() {
            return HARNESS;
        }
    }

    /** JUnit gives an instance field of a per-class instance the class callbacks too. */
    @EnabledIf("dev.continuum.router.proxy.http.RouterExtensionTest#launching")
    static class PerClassInstanceField extends ClassScoped {
        @RegisterExtension
        final RouterExtension harness = RouterExtension.builder().upstream("a").build();

        @Override
        RouterExtension harness() {
            return harness;
        }
    }
}
