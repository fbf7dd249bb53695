package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ApiKeysConfig;
import dev.continuum.router.core.config.ByteSize;
import dev.continuum.router.testing.TestUpstream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Early answers reach a client that is still uploading: the router answers, half-closes, drains the rest of the
 * request within its bounds and only then closes, so the client reads the status instead of a broken pipe. The
 * clients are real sockets that write a 9.5 MB body in 64 KiB pieces (their own send loop paces them) and read
 * only afterwards, as a naive SDK does, plus the JDK client.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class EarlyAnswerTest {
    private static final int UPLOAD = 9_500_000;
    private static final int PIECE = 64 * 1024;
    /** A drain time no test reaches: a close it sees comes from the request's end or the byte bound. */
    private static final IngressLimits LONG_LINGER = new IngressLimits(1, Duration.ofMinutes(5), 16L * 1024 * 1024,
            32 * 1024, 64 * 1024);

    private final TestUpstream a = TestUpstream.start("a");
    private RouterHarness router;
    private Process child;

    @AfterEach
    void tearDown() throws Exception {
        if (router != null) {
            router.close();
        }
        a.close();
        if (child != null) {
            child.getOutputStream().close(); // the probe stops at the end of its stdin
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private void start(ConfigBuilder cfg) {
        router = RouterHarness.start(cfg.build());
    }

    private void start(ConfigBuilder cfg, IngressLimits limits) {
        router = RouterHarness.start(cfg.build(), b -> b.ingressLimits(limits));
    }

    private ConfigBuilder smallBodyLimit() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.maxBody = ByteSize.ofMiB(1);
        return cfg;
    }

    private double connections() {
        return router.registry.get(IngressMetrics.CONNECTIONS).gauge().value();
    }

    private static String head(long contentLength, String... extra) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + String.join("", extra) + "Content-Length: " + contentLength + "\r\n\r\n";
    }

    /** A JSON chat body of exactly {@code size} bytes. */
    private static byte[] body(int size, String model) {
        String open = "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"";
        String close = "\"}]}";
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) 'x');
        System.arraycopy(open.getBytes(StandardCharsets.US_ASCII), 0, b, 0, open.length());
        System.arraycopy(close.getBytes(StandardCharsets.US_ASCII), 0, b, size - close.length(), close.length());
        return b;
    }

    /** Writes {@code data} in pieces, flushing each; any failure (a reset, a broken pipe) propagates. */
    private static void send(OutputStream out, byte[] data, int from, int to) throws IOException {
        for (int i = from; i < to; i += PIECE) {
            out.write(data, i, Math.min(PIECE, to - i));
            out.flush();
        }
    }

    /** Sends a whole request, then reads one answer: what a client that uploads before reading sees. */
    private static String uploadThenRead(int port, String head, byte[] body) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            send(out, body, 0, body.length);
            return RawHttp.readResponse(s.getInputStream());
        }
    }

    @Test
    void aClientThatUploadsItsWholeOversizedBodyBeforeReadingGetsThe413() throws Exception {
        start(smallBodyLimit(), LONG_LINGER);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(head(UPLOAD).getBytes(StandardCharsets.US_ASCII));
            send(out, body(UPLOAD, "m"), 0, UPLOAD); // refused from the head, before its first byte

            String res = RawHttp.readAll(s.getInputStream()); // ends at the router's half-close
            assertThat(res).startsWith("HTTP/1.1 413 ").contains("connection: close").contains("request_too_large");
            // The router closed at the body's last byte (the drain time is out of reach), while this socket is open.
            await().until(() -> connections() == 0);
        }
        assertThat(a.completionCount()).isZero();
    }

    /**
     * A slow client: its send loop puts one 256 KiB piece on the wire every 80 ms, so the 9.5 MB take about 3 s,
     * longer than a fixed short linger, within the default 5 s drain. It reads only after its last byte.
     */
    @Test
    void aSlowClientStillUploadingSecondsAfterThe413ReadsIt() throws Exception {
        start(smallBodyLimit());
        byte[] body = body(UPLOAD, "m");
        int piece = 256 * 1024;
        ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(head(UPLOAD).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            CompletableFuture<Void> sent = new CompletableFuture<>();
            AtomicInteger next = new AtomicInteger();
            long started = System.nanoTime();
            pacer.scheduleAtFixedRate(() -> {
                int from = next.getAndAdd(piece);
                try {
                    send(out, body, from, Math.min(from + piece, UPLOAD));
                    if (from + piece >= UPLOAD) {
                        sent.complete(null);
                        throw new CancellationException("sent"); // ends the fixed-rate task
                    }
                } catch (IOException e) {
                    sent.completeExceptionally(e);
                    throw new CancellationException("failed");
                }
            }, 0, 80, TimeUnit.MILLISECONDS);

            sent.get(60, TimeUnit.SECONDS); // a reset or broken pipe fails here
            long tookMillis = (System.nanoTime() - started) / 1_000_000;
            String res = RawHttp.readAll(s.getInputStream());
            assertThat(res).startsWith("HTTP/1.1 413 ").contains("request_too_large");
            assertThat(tookMillis).as("the upload was slow").isGreaterThan(2500);
        } finally {
            pacer.shutdownNow();
        }
    }

    @Test
    void theJdkClientReadsThe413WhileItUploads() throws Exception {
        start(smallBodyLimit());
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

        HttpResponse<String> res = client.send(HttpRequest.newBuilder(router.uri("/v1/chat/completions"))
                .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(UPLOAD, "m"))).build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(res.statusCode()).isEqualTo(413);
        assertThat(res.body()).contains("request_too_large");
    }

    @Test
    void anUnauthenticatedUploadGetsIts401() throws Exception {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.apiKeys = new ApiKeysConfig(ApiKeysConfig.Mode.BLOCKING, null,
                List.of(ConfigBuilder.key("team", "sk-team")));
        start(cfg);

        String res = uploadThenRead(router.port, head(UPLOAD, "Authorization: Bearer sk-wrong\r\n"),
                body(UPLOAD, "m"));

        assertThat(res).startsWith("HTTP/1.1 401 ");
        assertThat(a.completionCount()).isZero();
    }

    @Test
    void aChunkedUploadRefusedMidBodyIsDrainedToItsLastChunkThenClosed() throws Exception {
        start(smallBodyLimit(), LONG_LINGER);
        byte[] piece = new byte[PIECE];
        Arrays.fill(piece, (byte) 'x');
        byte[] chunk = ("10000\r\n" + new String(piece, StandardCharsets.US_ASCII) + "\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < 20; i++) { // 1.25 MiB: past the 1 MiB limit
                out.write(chunk);
            }
            out.flush();
            // The answer and the end of the router's output arrive while the body is still open.
            String res = RawHttp.readAll(s.getInputStream());
            assertThat(res).startsWith("HTTP/1.1 413 ").contains("connection: close");
            assertThat(connections()).isEqualTo(1.0); // still reading what the client sends
            // The 1 MiB read before the refusal is freed at the answer, not held until the close.
            await().until(() -> router.registry.get(IngressMetrics.BUFFERED_BYTES).gauge().value() == 0);
            assertThat(connections()).isEqualTo(1.0);

            for (int i = 0; i < 20; i++) {
                out.write(chunk);
            }
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            await().until(() -> connections() == 0); // closed at the request's own end
        }
    }

    /** The ingress speaks HTTP/1.1 only: an h2c upgrade is not taken (no 101, no stream to reset). */
    @Test
    void anH2cUpgradeWithAnOversizedBodyGetsAnHttp11Answer() throws Exception {
        start(smallBodyLimit());

        String res = uploadThenRead(router.port, head(UPLOAD, "Connection: Upgrade, HTTP2-Settings\r\n",
                "Upgrade: h2c\r\n", "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"), body(UPLOAD, "m"));

        assertThat(res).startsWith("HTTP/1.1 413 ").doesNotContain("101 Switching");
    }

    @Test
    void anHttp2PriorKnowledgePrefaceIsRefusedInHttp11() throws Exception {
        start(smallBodyLimit());

        String res = RawHttp.exchange(router.port, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 10_000);

        assertThat(res).startsWith("HTTP/1.1 400 ");
    }

    @Test
    void stopsDrainingAtTheByteBound() throws Exception {
        ConfigBuilder cfg = smallBodyLimit();
        cfg.maxBody = new ByteSize(1000);
        // The time bound is out of reach: only the byte bound (64 KiB, above the 1000-byte body limit) can close.
        start(cfg, new IngressLimits(1, Duration.ofMinutes(5), 64 * 1024, 32 * 1024, 64 * 1024));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(head(UPLOAD).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readAll(s.getInputStream())).startsWith("HTTP/1.1 413 ");
            assertThat(connections()).isEqualTo(1.0);
            try {
                send(out, body(UPLOAD, "m"), 0, 1024 * 1024);
            } catch (IOException reset) {
                // expected at some point: the router closed once 64 KiB were drained
            }
            await().until(() -> connections() == 0);
        }
    }

    @Test
    void stopsDrainingAtTheTimeBound() throws Exception {
        start(smallBodyLimit(), new IngressLimits(1, Duration.ofMillis(300), 16L * 1024 * 1024, 32 * 1024, 64 * 1024));
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(head(UPLOAD).getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(RawHttp.readAll(s.getInputStream())).startsWith("HTTP/1.1 413 ");
            // The client neither sends its body nor closes: the router closes when the drain time is up.
            await().atMost(Duration.ofSeconds(10)).until(() -> connections() == 0);
        }
    }

    /**
     * 20 uploads of 9.5 MB at once against a router in its own JVM with a 128 MiB heap (so about 64 MiB of
     * request buffers): the ones that fit are read and answered (404, the model is unknown), the others are
     * refused with 503 mid-upload, and every client reads its status.
     */
    @Test
    void twentyConcurrentUploadsAgainstA128MiBHeapAllGetTheirStatus() throws Exception {
        int port = startProbe();
        byte[] body = body(UPLOAD, "unknown-model");
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            List<Future<String>> results = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                results.add(pool.submit(() -> uploadThenRead(port, head(UPLOAD), body)));
            }
            Map<String, Integer> statuses = new TreeMap<>();
            for (Future<String> f : results) {
                String res = f.get(150, TimeUnit.SECONDS); // a broken pipe or reset fails here
                assertThat(res).matches("(?s)HTTP/1\\.1 (404|503) .*");
                statuses.merge(res.substring(9, 12), 1, Integer::sum);
            }
            System.out.println("20 uploads of 9.5 MB, -Xmx128m: statuses " + statuses);
        } finally {
            pool.shutdownNow();
        }
        assertThat(child.isAlive()).isTrue();
    }

    private int startProbe() throws IOException, InterruptedException {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), LingerProbe.class.getName());
        child = new ProcessBuilder(command).redirectErrorStream(true).start();
        LinkedBlockingQueue<String> ports = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    if (line.startsWith("probe: port ")) {
                        ports.add(line.substring("probe: port ".length()));
                    }
                }
            } catch (IOException closed) {
                // the child is gone
            }
        }, "linger-probe-output");
        reader.setDaemon(true);
        reader.start();
        String port = ports.poll(60, TimeUnit.SECONDS);
        assertThat(port).as("the probe's port").isNotNull();
        return Integer.parseInt(port);
    }
}
