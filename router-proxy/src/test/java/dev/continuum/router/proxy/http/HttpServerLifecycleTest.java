package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.lifecycle.LifecycleState;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The server as a lifecycle component: failed start, stop before start, idempotent stop, the grace's source. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpServerLifecycleTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");

    /** Event-loop threads of every router server in this JVM ({@code continuum-io-*}). */
    private static long ioThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("continuum-io-")).count();
    }

    @Test
    void aFailedBindReleasesTheEventLoopsAndEndsStopped() throws Exception {
        await().atMost(10, TimeUnit.SECONDS).until(() -> ioThreads() == 0);
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
            // The first listener binds, the second cannot: the first must be released too.
            cfg.binds = List.of(new BindAddress.Tcp("127.0.0.1", 0), new BindAddress.Tcp("127.0.0.1", taken.getLocalPort()));
            HttpServer server = HttpServer.builder(cfg.build(), new SimpleMeterRegistry()).build();

            assertThatThrownBy(() -> server.start().join()).isInstanceOf(CompletionException.class)
                    .hasMessageContaining("cannot listen on");

            assertThat(server.state()).isEqualTo(LifecycleState.STOPPED);
            assertThat(server.ready()).isFalse();
            assertThat(server.stop()).isCompleted();
            await().atMost(10, TimeUnit.SECONDS).until(() -> ioThreads() == 0);
        }
    }

    @Test
    void stoppingBeforeStartingCreatesNothingAndStartingAfterwardsFails() {
        HttpServer server = HttpServer.builder(ConfigBuilder.create().build(), new SimpleMeterRegistry()).build();
        assertThat(server.state()).isEqualTo(LifecycleState.NEW);
        assertThat(server.stop()).isCompleted();
        assertThat(server.state()).isEqualTo(LifecycleState.STOPPED);
        assertThat(server.start()).isCompletedExceptionally();
        assertThat(server.boundAddresses()).isEmpty();
    }

    @Test
    void stopIsIdempotentAndLeavesNoEventLoopThread() {
        HttpServer server = HttpServer.builder(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                new SimpleMeterRegistry()).shutdownGrace(Duration.ZERO).build();
        server.start().join();
        assertThat(server.state()).isEqualTo(LifecycleState.STARTED);
        assertThat(ioThreads()).isPositive();

        CompletableFuture<Void> first = server.stop();
        assertThat(server.stop()).isSameAs(first);
        first.join();

        assertThat(server.state()).isEqualTo(LifecycleState.STOPPED);
        await().atMost(10, TimeUnit.SECONDS).until(() -> ioThreads() == 0);
    }

    @Test
    void withoutABuilderGraceTheStopDrainsForTheLastAppliedConfigsGrace() throws Exception {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.shutdownGrace = Duration.ofMinutes(10);
        HttpServer server = HttpServer.builder(cfg.build(), new SimpleMeterRegistry()).build();
        server.start().join();
        try {
            a.defaultReply(Reply.controlledStream());
            int port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            CompletableFuture<HttpResponse<Void>> open = http.sendAsync(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                            .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                    HttpResponse.BodyHandlers.discarding());
            StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));

            // A reload shortens the grace to nothing: the open stream is cut at once instead of in ten minutes.
            cfg.shutdownGrace = Duration.ZERO;
            server.apply(cfg.build());
            server.stop().get(20, TimeUnit.SECONDS);

            assertThat(upstream.awaitClosed(5000)).isTrue();
            open.handle((r, e) -> null).get(10, TimeUnit.SECONDS);
        } finally {
            server.stop().join();
        }
    }
}
