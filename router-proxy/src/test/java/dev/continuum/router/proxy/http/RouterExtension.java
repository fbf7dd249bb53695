package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.testing.TestCertificate;
import dev.continuum.router.testing.TestUpstream;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Named {@link TestUpstream}s on free loopback ports and the {@link RouterHarness}es a test starts in front of
 * them, owned and closed by JUnit instead of by an {@code @AfterEach} in every class.
 *
 * <pre>{@code
 * @RegisterExtension
 * final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
 * private final TestUpstream a = harness.upstream("a");
 *
 * @Test
 * void something() {
 *     RouterHarness router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
 * }
 * }</pre>
 *
 * <p>{@link Builder#build()} starts the upstreams at once, so a field initializer can read their URLs (as the
 * hand-written fields it replaces did). On an instance field of a class with a new test instance per test,
 * everything is closed after each test. On a {@code static} field (or an instance field of a
 * {@code @TestInstance(PER_CLASS)} class: JUnit gives either the class callbacks) the upstreams, and the
 * routers started outside a test method (in {@code @BeforeAll}), live for the class, for classes whose tests
 * only read from one router; a router started inside a test method is still closed after that test. Closing runs in reverse order of
 * starting (routers before the upstreams behind them), attempts every resource even when one fails, and
 * reports the first failure with the others suppressed, each naming what failed to close.
 */
final class RouterExtension implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {
    private final Map<String, TestUpstream> upstreams;
    /** What lives for the class (static field) or for the one test (instance field); closed last in, first out. */
    private final Deque<Named> outer = new ConcurrentLinkedDeque<>();
    /** With a static field: what a test method started, closed after that test. */
    private final Deque<Named> perTest = new ConcurrentLinkedDeque<>();
    private volatile boolean classScoped;
    private volatile boolean inTest;

    private RouterExtension(Map<String, TestUpstream> upstreams) {
        this.upstreams = upstreams;
        upstreams.forEach((name, u) -> outer.push(new Named("upstream '" + name + "'", u)));
    }

    static Builder builder() {
        return new Builder();
    }

    /** The upstream the builder started under {@code name}. */
    TestUpstream upstream(String name) {
        TestUpstream u = upstreams.get(name);
        if (u == null) {
            throw new IllegalArgumentException("no upstream '" + name + "' in this extension; it has " + upstreams.keySet());
        }
        return u;
    }

    /** Starts a router with {@code config} (the harness's defaults: a 500 ms drain); closed with the scope. */
    RouterHarness start(RouterConfig config) {
        return start(config, b -> { });
    }

    /** Starts a router with {@code config} and the server settings {@code customize} applies. */
    RouterHarness start(RouterConfig config, Consumer<HttpServer.Builder> customize) {
        return track("router", () -> RouterHarness.start(config, customize));
    }

    /** Starts an HTTPS upstream named {@code name} serving {@code certificate}; closed with the scope. */
    TestUpstream startTls(String name, TestCertificate certificate) {
        return track("TLS upstream '" + name + "'", () -> TestUpstream.startTls(name, certificate));
    }

    private <T extends AutoCloseable> T track(String what, Supplier<T> starter) {
        T started;
        try {
            started = starter.get();
        } catch (RuntimeException e) {
            throw new IllegalStateException(what + " did not start", e);
        }
        (classScoped && inTest ? perTest : outer).push(new Named(what, started));
        return started;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        classScoped = true; // a static field, or an instance field of a @TestInstance(PER_CLASS) class
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        inTest = true;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        inTest = false;
        closeAll(classScoped ? perTest : outer);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        closeAll(outer);
    }

    private static void closeAll(Deque<Named> resources) throws Exception {
        List<Exception> failures = new ArrayList<>();
        for (Named r = resources.poll(); r != null; r = resources.poll()) {
            try {
                r.resource().close();
            } catch (Exception e) {
                failures.add(new IllegalStateException("closing " + r.what() + " failed", e));
            }
        }
        if (!failures.isEmpty()) {
            Exception first = failures.get(0);
            failures.subList(1, failures.size()).forEach(first::addSuppressed);
            throw first;
        }
    }

    private record Named(String what, AutoCloseable resource) { }

    /** The upstreams a test class needs, by name. */
    static final class Builder {
        private final List<String> names = new ArrayList<>();

        private Builder() { }

        /** A plain HTTP upstream named {@code name} (the name its echo replies carry). */
        Builder upstream(String name) {
            if (names.contains(name)) {
                throw new IllegalArgumentException("upstream '" + name + "' named twice");
            }
            names.add(name);
            return this;
        }

        /** Starts every upstream on a free port; if one fails, those already started are closed first. */
        RouterExtension build() {
            Map<String, TestUpstream> started = new LinkedHashMap<>();
            for (String name : names) {
                try {
                    started.put(name, TestUpstream.start(name));
                } catch (RuntimeException e) {
                    IllegalStateException failure = new IllegalStateException("upstream '" + name + "' did not start", e);
                    started.values().forEach(u -> {
                        try {
                            u.close();
                        } catch (RuntimeException closing) {
                            failure.addSuppressed(closing);
                        }
                    });
                    throw failure;
                }
            }
            return new RouterExtension(started);
        }
    }
}
