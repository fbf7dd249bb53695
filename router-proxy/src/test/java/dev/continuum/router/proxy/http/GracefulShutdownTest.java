package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GracefulShutdownTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    private RouterHarness router;

    private HttpResponse<InputStream> openStream() throws Exception {
        CompletableFuture<HttpResponse<InputStream>> pending = router.http.sendAsync(
                HttpRequest.newBuilder(router.uri("/v1/chat/completions"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"m\",\"stream\":true}")).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        return pending.get(5, TimeUnit.SECONDS);
    }

    @Test
    void letsAnInFlightStreamFinishWhileRefusingNewConnections() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                b -> b.shutdownGrace(Duration.ofSeconds(20)));
        a.defaultReply(Reply.controlledStream());
        // An idle keep-alive connection that has served one request.
        Socket idle = new Socket(InetAddress.getLoopbackAddress(), router.port);
        idle.setSoTimeout(5000);
        idle.getOutputStream().write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        InputStream idleIn = idle.getInputStream();
        assertThat(idleIn.read(new byte[4096])).isPositive();

        HttpResponse<InputStream> res = openStream();
        StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));
        BufferedReader reader = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8));
        upstream.send("one");
        assertThat(reader.readLine()).isEqualTo("data: one");

        CompletableFuture<Void> stopped = router.server.stop();

        assertThat(router.server.ready()).isFalse();
        await().untilAsserted(() -> assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), router.port).close())
                .isInstanceOf(ConnectException.class));
        assertThat(idleIn.read()).isEqualTo(-1); // idle connections close at once
        idle.close();
        assertThat(stopped).isNotDone();

        upstream.send("two");
        upstream.finish();
        StringBuilder rest = new StringBuilder();
        String line;
        while ((line = reader.readLine()) != null) {
            rest.append(line).append('\n');
        }
        assertThat(rest.toString()).contains("data: two").contains("data: [DONE]");
        stopped.get(10, TimeUnit.SECONDS);
    }

    @Test
    void aBusyConnectionGetsConnectionCloseOnItsResponse() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                b -> b.shutdownGrace(Duration.ofSeconds(10)));
        a.defaultReply(Reply.delayed(Duration.ofMillis(500), Reply.echo()));
        String body = "{\"model\":\"m\"}";
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length()
                    + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));
            await().until(() -> a.completionCount() == 1);

            CompletableFuture<Void> stopped = router.server.stop();

            String res = RawHttp.readAll(s.getInputStream()); // ends because the server closes
            assertThat(res).startsWith("HTTP/1.1 200 OK").contains("connection: close").contains("\"upstream\":\"a\"");
            stopped.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void forceClosesWhatIsStillOpenWhenTheGraceRunsOut() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build(),
                b -> b.shutdownGrace(Duration.ofMillis(200)));
        a.defaultReply(Reply.controlledStream());
        HttpResponse<InputStream> res = openStream();
        StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));

        router.server.stop().get(10, TimeUnit.SECONDS);

        assertThat(upstream.awaitClosed(5000)).isTrue();
        try (InputStream in = res.body()) {
            assertThatThrownBy(() -> {
                while (in.read() >= 0) {
                    // drain until the truncated end
                }
            }).isInstanceOf(IOException.class);
        }
    }

    @Test
    void answersHealth503WhileStillAcceptingForTheQuietPeriodThenClosesListeners() throws Exception {
        AtomicLong clock = new AtomicLong(System.nanoTime());
        AtomicReference<HttpServer> server = new AtomicReference<>();
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.shutdownQuietPeriod = Duration.ofSeconds(5);
        // What router-admin's HealthRoute answers, from the same readiness flag.
        LocalRoute health = req -> CompletableFuture.completedFuture(server.get().ready()
                ? LocalResponse.json(200, "{\"status\":\"ok\"}") : LocalResponse.json(503, "{\"status\":\"draining\"}"));
        router = harness.start(cfg.build(), b -> b.routeExact("/health", health)
                .proxyOptions(ProxyOptions.defaults().withNanoClock(clock::get)).shutdownGrace(Duration.ofSeconds(20)));
        server.set(router.server);
        String probe = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        assertThat(RawHttp.exchange(router.port, probe, 5000)).startsWith("HTTP/1.1 200 OK");

        CompletableFuture<Void> stopped = router.server.stop();

        // New connections are still accepted: health checks see draining, and requests are still served.
        assertThat(RawHttp.exchange(router.port, probe, 5000)).startsWith("HTTP/1.1 503 ").contains("draining");
        String body = "{\"model\":\"m\"}";
        assertThat(RawHttp.exchange(router.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + "Content-Length: " + body.length() + "\r\n\r\n" + body, 5000)).startsWith("HTTP/1.1 200 OK");
        assertThat(RawHttp.exchange(router.port, probe, 5000)).startsWith("HTTP/1.1 503 ");
        assertThat(stopped).isNotDone();

        clock.addAndGet(Duration.ofSeconds(5).toNanos());

        await().untilAsserted(() -> assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), router.port).close())
                .isInstanceOf(ConnectException.class));
        stopped.get(10, TimeUnit.SECONDS);
    }
}
