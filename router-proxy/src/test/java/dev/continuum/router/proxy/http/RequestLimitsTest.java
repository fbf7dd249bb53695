package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.proxy.ProxyOptions;
import dev.continuum.router.testing.Reply;
import dev.continuum.router.testing.TestUpstream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RequestLimitsTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    /** The header-read timeout's clock: a head is late only when the test moves this past the timeout. */
    private final AtomicLong clock = new AtomicLong(System.nanoTime());
    private RouterHarness router;

    @BeforeEach
    void setUp() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.maxBody = new ByteSize(1024);
        cfg.maxLine = new ByteSize(256);
        cfg.maxHeader = new ByteSize(1024);
        cfg.headerReadTimeout = Duration.ofMillis(300);
        cfg.idleTimeout = Duration.ofMillis(500);
        router = harness.start(cfg.build(), b -> b.proxyOptions(ProxyOptions.defaults().withNanoClock(clock::get)));
    }

    /**
     * Moves the header-read clock past the timeout until the router closes without an answer: the head's
     * start is read when its bytes arrive, which the test cannot observe, so one step might come too early.
     */
    private void assertClosedOnceTheClockPassesTheTimeout(Socket s) {
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            clock.addAndGet(Duration.ofMillis(301).toNanos());
            return !open(s);
        });
    }

    /** True while the connection is open and silent; false once the router closed it. */
    private static boolean open(Socket s) throws IOException {
        int timeout = s.getSoTimeout();
        s.setSoTimeout(1);
        try {
            int b = s.getInputStream().read();
            if (b >= 0) {
                throw new AssertionError("the router sent data where it should stay silent");
            }
            return false;
        } catch (SocketTimeoutException e) {
            return true; // nothing to read, and not closed
        } finally {
            s.setSoTimeout(timeout);
        }
    }

    private static String statusLine(String response) {
        int end = response.indexOf("\r\n");
        return end < 0 ? response : response.substring(0, end);
    }

    @Test
    void refusesAnOversizedBody() {
        String big = "{\"model\":\"m\",\"pad\":\"" + "x".repeat(2000) + "\"}";

        HttpResponse<String> res = router.post("/v1/chat/completions", big);

        assertThat(res.statusCode()).isEqualTo(413);
        assertThat(res.body()).contains("\"code\":\"request_too_large\"");
        assertThat(a.completionCount()).isZero();
    }

    @Test
    void refusesFromContentLengthBeforeReadingTheBody() throws Exception {
        // Only the head is sent: the answer cannot depend on reading the body.
        String res = RawHttp.exchange(router.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n", 5000);

        assertThat(statusLine(res)).isEqualTo("HTTP/1.1 413 Request Entity Too Large");
        assertThat(res).contains("connection: close").contains("request_too_large");
    }

    @Test
    void refusesAnExpectContinueRequestWithoutAskingForTheBody() throws Exception {
        String res = RawHttp.exchange(router.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                + "Expect: 100-continue\r\nContent-Length: 5000\r\n\r\n", 5000);

        assertThat(res).doesNotContain("100 Continue");
        assertThat(statusLine(res)).contains("413");
    }

    @Test
    void continuesAnExpectContinueRequestWithinTheLimit() throws Exception {
        String body = "{\"model\":\"m\"}";
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n"
                    + "Content-Length: " + body.length() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[64];
            int n = in.read(buf);
            assertThat(new String(buf, 0, n, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 100 Continue");
            out.write(body.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readAll(in)).contains("HTTP/1.1 200 OK");
        }
    }

    @Test
    void refusesAnOversizedChunkedBody() throws Exception {
        String chunk = "x".repeat(600);
        String res = RawHttp.exchange(router.port, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(600) + "\r\n" + chunk + "\r\n"
                + Integer.toHexString(600) + "\r\n" + chunk + "\r\n", 5000);

        assertThat(statusLine(res)).contains("413");
    }

    @Test
    void refusesATooLongRequestLineWith414() throws Exception {
        String res = RawHttp.exchange(router.port, "GET /v1/models?q=" + "a".repeat(400) + " HTTP/1.1\r\nHost: x\r\n\r\n", 5000);

        assertThat(statusLine(res)).contains("414");
        assertThat(res).contains("\"error\":{");
    }

    @Test
    void refusesTooLargeHeadersWith431() throws Exception {
        String res = RawHttp.exchange(router.port, "GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: "
                + "b".repeat(2000) + "\r\n\r\n", 5000);

        assertThat(statusLine(res)).contains("431");
    }

    @Test
    void closesAConnectionThatDoesNotFinishItsHead() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write("GET /v1/models HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();

            assertClosedOnceTheClockPassesTheTimeout(s);
        }
    }

    @Test
    void keepsAliveBetweenRequestsThenClosesIdleConnections() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            for (int i = 0; i < 2; i++) {
                out.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                byte[] buf = new byte[4096];
                int n = in.read(buf);
                assertThat(new String(buf, 0, n, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200 OK");
            }
            // Silent past the idle timeout: the server closes.
            assertThat(in.read()).isEqualTo(-1);
        }
    }

    @Test
    void timesTheHeadOfALaterRequestFromItsFirstByte() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200 OK");
            // The timer armed for the first head is still pending; the second head starts later and stalls.
            clock.addAndGet(Duration.ofMillis(150).toNanos());
            out.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();

            assertClosedOnceTheClockPassesTheTimeout(s);
        }
    }

    @Test
    void aRequestInFlightIsNotIdleAndIdlenessCountsFromTheResponse() throws Exception {
        // Its own router with a 1 s idle timeout, for margins a loaded machine keeps. The answer takes 2.9 s and
        // ends just before the idle check that the request's own read armed (at 3 s): only a count restarted by
        // the response keeps the connection open past it.
        router.close();
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.idleTimeout = Duration.ofSeconds(1);
        router = harness.start(cfg.build());
        a.enqueue(Reply.delayed(Duration.ofMillis(2900), Reply.echo()));
        String body = "{\"model\":\"m\"}";
        String chat = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length()
                + "\r\n\r\n" + body;
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(chat.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200 OK");
            // Still open for 400 ms after that response (past the 3 s check): idleness counts from its end.
            await().during(Duration.ofMillis(400)).atMost(Duration.ofSeconds(2)).until(() -> open(s));
            out.write(chat.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200 OK");

            assertThat(in.read()).isEqualTo(-1); // then silent past the idle timeout: closed
        }
    }

    @Test
    void answersPipelinedRequestsInOrder() throws Exception {
        String body = "{\"model\":\"m\"}";
        String one = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        String two = "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n";
        String three = "GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

        String res = RawHttp.exchange(router.port, one + two + three, 5000);

        int ok = res.indexOf("HTTP/1.1 200 OK");
        int notFound = res.indexOf("HTTP/1.1 404 Not Found");
        int last = res.lastIndexOf("HTTP/1.1 200 OK");
        assertThat(ok).isGreaterThanOrEqualTo(0);
        assertThat(notFound).isGreaterThan(ok);
        assertThat(last).isGreaterThan(notFound);
    }
}
