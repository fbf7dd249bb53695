package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.LogCapture;
import dev.continuum.router.testing.TestUpstream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The ingress's shared bounds: body-read deadline, buffered-request budget, connection cap. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IngressBoundsTest {
    private static final String BODY = "{\"model\":\"m\",\"pad\":\"" + "p".repeat(480) + "\"}";

    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    private final AtomicLong clock = new AtomicLong(System.nanoTime());
    private RouterHarness router;

    private void start(ConfigBuilder cfg) {
        router = harness.start(cfg.build(),
                b -> b.proxyOptions(ProxyOptions.defaults().withNanoClock(clock::get)));
    }

    private static ConfigBuilder config(TestUpstream upstream) {
        return ConfigBuilder.create().backend("a", upstream.baseUrl(), "m");
    }

    private Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port);
        s.setSoTimeout(10_000);
        return s;
    }

    private static void write(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    private static String head(int contentLength) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + contentLength + "\r\n\r\n";
    }

    private double gauge(String name) {
        return router.registry.get(name).gauge().value();
    }

    @Test
    void aTrickledBodyIsRefusedWith408AtTheBodyReadDeadline() throws Exception {
        ConfigBuilder cfg = config(a);
        cfg.bodyReadTimeout = Duration.ofSeconds(30);
        start(cfg);
        try (Socket s = connect()) {
            write(s, head(BODY.length()) + BODY.substring(0, 10));
            await().until(() -> gauge(IngressMetrics.BUFFERED_BYTES) == 10);
            // Every byte restarts the idle timeout; only the deadline from the head ends this.
            clock.addAndGet(Duration.ofSeconds(31).toNanos());
            write(s, BODY.substring(10, 11));

            String res = RawHttp.readAll(s.getInputStream());
            assertThat(res).startsWith("HTTP/1.1 408 ").contains("connection: close").contains("request_timeout");
        }
        assertThat(a.completionCount()).isZero();
        assertThat(router.scrape()).contains("continuum_ingress_rejected_total{reason=\"body_read_timeout\"} 1.0");
        await().until(() -> gauge(IngressMetrics.BUFFERED_BYTES) == 0);
    }

    @Test
    void aBodyWithinTheDeadlineIsServed() throws Exception {
        ConfigBuilder cfg = config(a);
        cfg.bodyReadTimeout = Duration.ofSeconds(30);
        start(cfg);
        try (Socket s = connect()) {
            write(s, head(BODY.length()).replace("Host: x\r\n", "Host: x\r\nConnection: close\r\n")
                    + BODY.substring(0, 10));
            clock.addAndGet(Duration.ofSeconds(29).toNanos());
            write(s, BODY.substring(10));

            assertThat(RawHttp.readAll(s.getInputStream())).startsWith("HTTP/1.1 200 OK");
        }
    }

    @Test
    void aBodyThatStopsArrivingIsAnswered408AtTheIdleTimeout() throws Exception {
        ConfigBuilder cfg = config(a);
        cfg.idleTimeout = Duration.ofMillis(300);
        start(cfg);
        try (Socket s = connect()) {
            write(s, head(BODY.length()) + BODY.substring(0, 10));

            String res = RawHttp.readAll(s.getInputStream()); // ends because the router closes
            assertThat(res).startsWith("HTTP/1.1 408 ");
        }
        assertThat(a.completionCount()).isZero();
    }

    @Test
    void refusesANewBodyWith503WhenTheBufferBudgetIsTakenAndServesAgainOnceItIsFree() throws Exception {
        ConfigBuilder cfg = config(a);
        cfg.maxBody = new ByteSize(1000);
        cfg.maxBuffered = new ByteSize(1200);
        start(cfg);
        try (Socket holder = connect()) {
            // One slow upload holds 500 bytes of the 1200.
            write(holder, head(BODY.length()) + BODY.substring(0, 500));
            await().until(() -> gauge(IngressMetrics.BUFFERED_BYTES) == 500);

            // A declared length that does not fit is refused from the head: its body is never read.
            String refused = RawHttp.exchange(router.port, head(800) + "x".repeat(800), 10_000);
            assertThat(refused).startsWith("HTTP/1.1 503 ").contains("retry-after: 1").contains("connection: close")
                    .contains("server_overloaded");
            // A chunked body is refused when the chunk that would overflow arrives.
            String chunk = "x".repeat(400);
            String chunked = RawHttp.exchange(router.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n190\r\n" + chunk + "\r\n190\r\n" + chunk + "\r\n0\r\n\r\n", 10_000);
            assertThat(chunked).startsWith("HTTP/1.1 503 ").contains("retry-after: 1");
            assertThat(a.completionCount()).isZero();

            write(holder, BODY.substring(500));
            assertThat(RawHttp.readResponse(holder.getInputStream())).startsWith("HTTP/1.1 200 OK");
        }
        await().until(() -> gauge(IngressMetrics.BUFFERED_BYTES) == 0);
        String big = "{\"model\":\"m\",\"pad\":\"" + "p".repeat(780) + "\"}";
        String after = RawHttp.exchange(router.port, head(big.length()).replace("Host: x\r\n",
                "Host: x\r\nConnection: close\r\n") + big, 10_000);
        assertThat(after).startsWith("HTTP/1.1 200 OK");
        assertThat(router.scrape()).contains("continuum_ingress_rejected_total{reason=\"buffers_full\"} 2.0");
    }

    @Test
    void answersAConnectionOverTheCapWith503AndAdmitsOnceOneCloses() throws Exception {
        ConfigBuilder cfg = config(a);
        cfg.maxConnections = 2;
        start(cfg);
        Socket one = connect();
        try (Socket two = connect()) {
            await().until(() -> gauge(IngressMetrics.CONNECTIONS) == 2);

            String over = RawHttp.exchange(router.port, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", 10_000);
            assertThat(over).startsWith("HTTP/1.1 503 ").contains("retry-after: 1").contains("connection: close");

            one.close();
            await().until(() -> gauge(IngressMetrics.CONNECTIONS) == 1);
            String admitted = RawHttp.exchange(router.port, "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    10_000);
            assertThat(admitted).startsWith("HTTP/1.1 200 OK");
            write(two, "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(RawHttp.readResponse(two.getInputStream())).startsWith("HTTP/1.1 200 OK");
        }
        assertThat(router.scrape()).contains("continuum_ingress_rejected_total{reason=\"connection_limit\"} 1.0");
    }

    @Test
    void countsAnOutOfMemoryConditionLogsItOnceAtWarnAndClosesTheConnection() throws Exception {
        // A local route that fails the way an exhausted allocator does: the error reaches the request handler.
        LocalRoute exhausted = req -> {
            throw new OutOfMemoryError("Direct buffer memory (simulated)");
        };
        try (LogCapture logs = LogCapture.of(HttpRequestHandler.class)) {
            router = harness.start(config(a).build(), b -> b.routeExact("/exhausted", exhausted));
            for (int i = 0; i < 2; i++) {
                try (Socket s = connect()) {
                    write(s, "GET /exhausted HTTP/1.1\r\nHost: x\r\n\r\n");
                    assertThat(s.getInputStream().read()).isEqualTo(-1); // closed, and a read timeout fails
                }
            }

            await().until(() -> router.scrape().contains("continuum_ingress_out_of_memory_total 2.0"));
            assertThat(logs.warnings()).filteredOn(m -> m.contains("out of memory")).hasSize(1);
        }
        // The router still serves.
        assertThat(RawHttp.exchange(router.port, "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                10_000)).startsWith("HTTP/1.1 200 OK");
    }
}
