package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.StreamHandle;
import dev.continuum.router.testing.TestUpstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamingTest {
    private static final String STREAM_BODY = "{\"model\":\"m\",\"stream\":true,\"messages\":[]}";
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").upstream("b").build();
    private final TestUpstream a = harness.upstream("a");
    private final TestUpstream b = harness.upstream("b");
    private RouterHarness router;

    private HttpRequest streamRequest() {
        return HttpRequest.newBuilder(router.uri("/v1/chat/completions"))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(STREAM_BODY)).build();
    }

    @Test
    void relaysEachEventBeforeTheUpstreamSendsTheNext() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        a.defaultReply(Reply.controlledStream());

        CompletableFuture<HttpResponse<InputStream>> pending =
                router.http.sendAsync(streamRequest(), HttpResponse.BodyHandlers.ofInputStream());
        StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));
        HttpResponse<InputStream> res = pending.get(5, TimeUnit.SECONDS);
        assertThat(res.statusCode()).isEqualTo(200);
        assertThat(res.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/event-stream"));

        try (BufferedReader reader = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8))) {
            upstream.send("{\"n\":1}");
            // The second event has not been sent yet: this line can only come from the first.
            assertThat(reader.readLine()).isEqualTo("data: {\"n\":1}");
            assertThat(reader.readLine()).isEmpty();
            upstream.send("{\"n\":2}");
            assertThat(reader.readLine()).isEqualTo("data: {\"n\":2}");
            assertThat(reader.readLine()).isEmpty();
            upstream.finish();
            assertThat(reader.readLine()).isEqualTo("data: [DONE]");
            assertThat(reader.readLine()).isEmpty();
            assertThat(reader.readLine()).isNull();
        }
    }

    @Test
    void stopsReadingTheUpstreamWhileTheClientDoesNotRead() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        long total = 160L * 1024 * 1024;
        a.defaultReply(Reply.bulkStream(total, 16 * 1024));

        try (Socket client = new Socket()) {
            client.setReceiveBufferSize(16 * 1024);
            client.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), router.port));
            OutputStream out = client.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Connection: close\r\nContent-Length: " + STREAM_BODY.length() + "\r\n\r\n" + STREAM_BODY)
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));

            // The router turns the upstream's reading off, so the upstream's socket fills and it stalls.
            await().atMost(Duration.ofSeconds(20)).until(() -> router.server.proxy().upstreamReadPauses() > 0);
            await().atMost(Duration.ofSeconds(20)).during(Duration.ofMillis(300)).until(() -> !upstream.isWritable());
            long stalledAt = upstream.bytesSent();
            assertThat(stalledAt).isLessThan(total / 2);

            // Once the client reads, the relay resumes and every byte arrives.
            long received = 0;
            byte[] buf = new byte[64 * 1024];
            InputStream in = client.getInputStream();
            int n;
            while ((n = in.read(buf)) >= 0) {
                received += n;
            }
            assertThat(received).isGreaterThan(total);
            assertThat(upstream.bytesSent()).isEqualTo(total);
        }
    }

    @Test
    void neverRetriesOnceTheFirstByteWentToTheClient() throws Exception {
        router = harness.start(ConfigBuilder.create()
                .backend("a", a.baseUrl(), "m").backend("b", b.baseUrl(), "m").build());
        a.defaultReply(Reply.controlledStream());

        CompletableFuture<HttpResponse<InputStream>> pending =
                router.http.sendAsync(streamRequest(), HttpResponse.BodyHandlers.ofInputStream());
        StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));
        HttpResponse<InputStream> res = pending.get(5, TimeUnit.SECONDS);
        StringBuilder seen = new StringBuilder();
        boolean truncated = false;
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(res.body(), StandardCharsets.UTF_8))) {
            upstream.send("first");
            seen.append(reader.readLine());
            upstream.abort();
            String line;
            while ((line = reader.readLine()) != null) {
                seen.append(line);
            }
        } catch (IOException e) {
            truncated = true; // the chunked body ended without its last chunk
        }
        assertThat(truncated).isTrue();
        assertThat(seen.toString()).startsWith("data: first").doesNotContain("[DONE]");
        assertThat(b.completionCount()).isZero();
        await().untilAsserted(() -> assertThat(router.scrape())
                .contains("continuum_stream_aborts_total{reason=\"upstream_closed\",side=\"upstream\"} 1.0"));
    }

    @Test
    void cutsAStreamWhoseUpstreamFallsSilentForTheIdleTimeout() throws Exception {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.idleTimeout = Duration.ofMillis(400);
        router = harness.start(cfg.build());
        a.defaultReply(Reply.controlledStream());

        CompletableFuture<HttpResponse<InputStream>> pending =
                router.http.sendAsync(streamRequest(), HttpResponse.BodyHandlers.ofInputStream());
        StreamHandle upstream = a.awaitStream(Duration.ofSeconds(5));
        HttpResponse<InputStream> res = pending.get(5, TimeUnit.SECONDS);
        upstream.send("one");

        try (InputStream in = res.body()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(in::readAllBytes).isInstanceOf(IOException.class);
        }
        assertThat(upstream.awaitClosed(5000)).isTrue();
        await().untilAsserted(() -> assertThat(router.scrape())
                .contains("continuum_stream_aborts_total{reason=\"idle_timeout\",side=\"upstream\"} 1.0"));
    }

    @Test
    void closesTheUpstreamWhenTheClientLeavesMidStream() throws Exception {
        router = harness.start(ConfigBuilder.create().backend("a", a.baseUrl(), "m").build());
        a.defaultReply(Reply.controlledStream());
        StreamHandle upstream;
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            client.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Length: " + STREAM_BODY.length() + "\r\n\r\n" + STREAM_BODY).getBytes(StandardCharsets.US_ASCII));
            upstream = a.awaitStream(Duration.ofSeconds(5));
            upstream.send("one");
            InputStream in = client.getInputStream();
            byte[] buf = new byte[256];
            String got = "";
            while (!got.contains("data: one")) {
                int n = in.read(buf);
                assertThat(n).isPositive();
                got += new String(buf, 0, n, StandardCharsets.US_ASCII);
            }
        }
        assertThat(upstream.awaitClosed(5000)).isTrue();
        await().untilAsserted(() -> assertThat(router.scrape())
                .contains("continuum_stream_aborts_total{reason=\"client_closed\",side=\"client\"} 1.0"));
        assertThat(router.backend("a").idleConnections()).isZero();
    }
}
