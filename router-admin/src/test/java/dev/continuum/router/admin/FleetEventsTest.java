package dev.continuum.router.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigSearchPath;
import dev.continuum.router.core.config.ConfigStore;
import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.proxy.http.HttpServer;
import dev.continuum.router.proxy.http.LocalResponse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fleet event stream on a real server over real sockets: frames arrive under the rate bound, credentials are
 * required and checked again after a reload, a bound on open streams, and a stream ends when its client leaves,
 * when the client stops reading (frames dropped, counted) and when the server stops. A fast period (50 ms) stands
 * in for the production second; the bound asserted is frames per elapsed periods, never a wall-clock duration.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FleetEventsTest {
    private static final Duration PERIOD = Duration.ofMillis(50);
    private static final String AUTH = "Bearer t0ken-xyz";

    @TempDir
    Path dir;
    private final List<Socket> sockets = new ArrayList<>();
    private final AtomicLong counter = new AtomicLong();
    private volatile int partBytes = 16;
    private ConfigStore store;
    private HttpServer server;
    private ExecutorService blocking;
    private MeterRegistry registry;
    private OwnedExecutor ticker;
    private int port;

    private static String doc(String token) {
        return """
                server: {bind_address: "127.0.0.1:0"}
                health_checks: {enabled: false}
                admin: {auth: {method: bearer_token, token: "%s"}}
                backends: [{name: a, url: "http://127.0.0.1:8000"}]
                """.formatted(token);
    }

    @BeforeEach
    void start() throws IOException {
        Files.writeString(dir.resolve("config.yaml"), doc("t0ken-xyz"));
        ConfigLoader loader = ConfigLoader.builder().environment(Map.of())
                .searchPath(new ConfigSearchPath(dir, dir.resolve("home"), dir.resolve("etc"))).build();
        store = ConfigStore.builder(loader).build();
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        AdminRoute.Builder b = AdminRoute.builder(new AdminAuthenticator(() -> store.current().admin()),
                () -> store.renderer().tree(store.current()), store::reload);
        // Every frame differs (a counter), and its size is what the slow-client test needs it to be.
        // A part that never changes rides only on a stream's first frame.
        Map<String, Callable<LocalResponse>> parts = new LinkedHashMap<>();
        parts.put("fleet", () -> LocalResponse.json(200,
                "{\"n\":" + counter.incrementAndGet() + ",\"pad\":\"" + "x".repeat(partBytes) + "\"}"));
        parts.put("fixed", () -> LocalResponse.json(200, "{\"same\":true}"));
        ticker = FleetEvents.ticker();
        ticker.start().join();
        FleetEvents events = new FleetEvents(b.authenticator(), parts, registry, ticker, PERIOD, 2);
        AdminRoute admin = b.endpoint(FleetEvents.PATH, io.netty.handler.codec.http.HttpMethod.GET, events).build();
        blocking = Executors.newSingleThreadExecutor();
        server = HttpServer.builder(store.current(), registry).blockingExecutor(blocking)
                .routePrefix("/admin/", admin).shutdownGrace(Duration.ofMillis(500)).build();
        server.start().join();
        port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
    }

    @AfterEach
    void stop() throws IOException {
        for (Socket s : sockets) {
            s.close();
        }
        if (server != null) {
            server.stop().join();
        }
        blocking.shutdownNow();
        ticker.stop().join();
    }

    /** A raw client of the stream: every line it reads, and whether the server ended the response. */
    private final class Client {
        final Socket socket;
        final List<String> lines = new CopyOnWriteArrayList<>();
        final AtomicBoolean ended = new AtomicBoolean();

        Client(String auth, boolean read) throws IOException {
            socket = new Socket("127.0.0.1", port);
            sockets.add(socket);
            if (!read) {
                socket.setReceiveBufferSize(4096);
            }
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + FleetEvents.PATH + " HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n"
                    + (auth == null ? "" : "Authorization: " + auth + "\r\n") + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            if (read) {
                Thread t = new Thread(this::read, "sse-client");
                t.setDaemon(true);
                t.start();
            }
        }

        private void read() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(socket.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the test closed the socket
            }
            ended.set(true);
        }

        long frames() {
            return lines.stream().filter(l -> l.startsWith("data: {\"fleet\":")).count();
        }

        String status() {
            return lines.isEmpty() ? "" : lines.get(0);
        }
    }

    private double gauge() {
        return registry.get(FleetEvents.STREAMS).gauge().value();
    }

    @Test
    void framesArriveAtMostOncePerPeriod() throws Exception {
        Client c = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= 1);
        long firstAt = System.nanoTime();
        long before = c.frames();
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= before + 10);
        long elapsedPeriods = (System.nanoTime() - firstAt) / PERIOD.toNanos();
        long got = c.frames() - before;
        assertThat(got).as("frames in %d periods", elapsedPeriods).isLessThanOrEqualTo(elapsedPeriods + 1);
        assertThat(c.status()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(c.lines).contains("content-type: text/event-stream; charset=utf-8", "transfer-encoding: chunked");
        assertThat(registry.get(FleetEvents.FRAMES).tag("kind", "data").counter().count())
                .isGreaterThanOrEqualTo(got);
        // Each frame is one JSON object on one data line; the unchanged part only in the first.
        List<String> data = c.lines.stream().filter(l -> l.startsWith("data: ")).toList();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertThat(json.readTree(data.get(0).substring(6)).get("fixed").get("same").asBoolean()).isTrue();
        for (String frame : data.subList(1, data.size())) {
            assertThat(json.readTree(frame.substring(6)).get("fleet").get("n").asLong()).isPositive();
            assertThat(frame).doesNotContain("\"fixed\"");
        }
    }

    /**
     * The ticker is the owner's: its one thread ticks while streams are open, and once the owner stopped it the thread
     * is gone and a stream opened then ends at once (the server is stopping) instead of waiting for frames.
     */
    @Test
    void theTickerThreadIsTheOwnersToStop() throws Exception {
        Client c = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= 1);
        assertThat(tickerThreads()).isEqualTo(1);
        ticker.stop().join();
        await().atMost(Duration.ofSeconds(20)).until(() -> tickerThreads() == 0);
        c.socket.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 0);
        Client late = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(late.ended::get);
        assertThat(late.status()).isEqualTo("HTTP/1.1 200 OK");
        assertThat(late.lines).contains("0"); // ended, not cut
        assertThat(late.frames()).isZero();
    }

    private static long tickerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith(FleetEvents.THREADS + "-")).count();
    }

    @Test
    void refusedWithoutTheAdminToken() throws Exception {
        Client none = new Client(null, true);
        Client wrong = new Client("Bearer wrong", true);
        await().atMost(Duration.ofSeconds(20)).until(() -> none.ended.get() && wrong.ended.get()
                || none.status().contains("401") && wrong.status().contains("401"));
        assertThat(none.status()).isEqualTo("HTTP/1.1 401 Unauthorized");
        assertThat(wrong.status()).isEqualTo("HTTP/1.1 401 Unauthorized");
        assertThat(gauge()).isZero();
    }

    @Test
    void theStreamEndsWhenTheClientLeaves() throws Exception {
        Client c = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= 1);
        assertThat(gauge()).isEqualTo(1.0);
        c.socket.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 0.0);
    }

    @Test
    void boundsOpenStreamsAndRefusesAboveWith503() throws Exception {
        Client a = new Client(AUTH, true);
        Client b = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 2.0);
        Client c = new Client(AUTH, true);
        // The JSON error body ends without a line break (and the connection stays open): the head is what is read.
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(c.lines).contains("Retry-After: 30"));
        assertThat(c.status()).isEqualTo("HTTP/1.1 503 Service Unavailable");
        assertThat(registry.get(FleetEvents.REFUSED).tag("reason", "limit").counter().count()).isEqualTo(1.0);
        a.socket.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 1.0);
        Client d = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> d.frames() >= 1);
        assertThat(b.ended.get()).isFalse();
    }

    @Test
    void aReloadThatChangesTheTokenEndsTheStream() throws Exception {
        Client c = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= 1);
        Files.writeString(dir.resolve("config.yaml"), doc("n3w-token"));
        assertThat(store.reload("test").result().label()).isEqualTo("success");
        await().atMost(Duration.ofSeconds(20)).until(c.ended::get);
        assertThat(c.lines).contains("0"); // the last chunk: the response ended, it was not cut
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 0.0);
    }

    @Test
    void aClientThatDoesNotReadHasFramesDroppedNotQueued() throws Exception {
        partBytes = 256 * 1024;
        Client slow = new Client(AUTH, false);
        await().atMost(Duration.ofSeconds(30)).until(() ->
                registry.get(FleetEvents.DROPPED).tag("reason", "slow_client").counter().count() >= 3);
        assertThat(gauge()).isEqualTo(1.0);
        slow.socket.close();
        await().atMost(Duration.ofSeconds(20)).until(() -> gauge() == 0.0);
    }

    @Test
    void aServerStopEndsTheStream() throws Exception {
        Client c = new Client(AUTH, true);
        await().atMost(Duration.ofSeconds(20)).until(() -> c.frames() >= 1);
        server.stop().join();
        server = null;
        await().atMost(Duration.ofSeconds(20)).until(c.ended::get);
        assertThat(c.lines).contains("0");
    }
}
