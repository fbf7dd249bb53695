package dev.continuum.router.kv.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.continuum.router.discovery.ModelCard.ArtifactFile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A real HTTP server (the JDK's) serving artifacts, one for the class; a fresh store and cache per test. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ArtifactStoreTest {
    private static final int CAP = 1024;
    private static final byte[] TOKENIZER = "{\"model\":{\"type\":\"BPE\"}}".getBytes(StandardCharsets.UTF_8);
    private static final String TOKENIZER_HEX = Blake3.hex(TOKENIZER);
    private static final byte[] MOVED = "{\"moved\":true}".getBytes(StandardCharsets.UTF_8);
    private static final String MOVED_HEX = Blake3.hex(MOVED);
    private static final byte[] BIG = new byte[CAP + 1];
    private static final String BIG_HEX = Blake3.hex(BIG);

    private HttpServer server;
    private String base;
    private final Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    private final Map<String, String> authorization = new ConcurrentHashMap<>();

    @TempDir
    Path dir;
    private final AtomicLong nanos = new AtomicLong(1_000);
    private SimpleMeterRegistry registry;
    private ArtifactStore store;

    @BeforeAll
    void startServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", this::serve);
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterAll
    void stopServer() {
        server.stop(0);
    }

    private void serve(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        hits.computeIfAbsent(path, k -> new AtomicInteger()).incrementAndGet();
        String auth = x.getRequestHeaders().getFirst("Authorization");
        authorization.put(path, auth == null ? "none" : auth);
        int port = server.getAddress().getPort();
        try (x) {
            switch (path) {
                case "/tokenizer.json", "/hf/org/repo/resolve/main/tokenizer.json" -> send(x, 200, TOKENIZER, false);
                case "/elsewhere.json" -> send(x, 200, MOVED, false);
                case "/big" -> send(x, 200, BIG, false);
                case "/big-chunked" -> send(x, 200, BIG, true);
                case "/wrong" -> send(x, 200, "not the pinned bytes".getBytes(StandardCharsets.UTF_8), false);
                case "/redirect" -> redirect(x, "/tokenizer.json");
                case "/loop" -> redirect(x, "/loop");
                // The Hub sends downloads to another host: the token must not follow.
                case "/hf/org/repo/resolve/main/moved.json" -> redirect(x, "http://localhost:" + port + "/elsewhere.json");
                default -> send(x, 404, new byte[0], false);
            }
        }
    }

    private static void send(HttpExchange x, int status, byte[] body, boolean chunked) throws IOException {
        x.sendResponseHeaders(status, chunked ? 0 : body.length == 0 ? -1 : body.length);
        try (OutputStream out = x.getResponseBody()) {
            out.write(body);
        }
    }

    private static void redirect(HttpExchange x, String location) throws IOException {
        x.getResponseHeaders().set("Location", location);
        x.sendResponseHeaders(302, -1);
    }

    @BeforeEach
    void newStore() {
        hits.clear();
        authorization.clear();
        store = store(base + "/hf");
        store.start().join();
    }

    private ArtifactStore store(String hfEndpoint) {
        registry = new SimpleMeterRegistry();
        return new ArtifactStore(new ArtifactCache(dir, CAP), new ArtifactFetcher(hfEndpoint, "hf_secret", CAP),
                new ArtifactMetrics(registry), nanos::get);
    }

    @AfterEach
    void stopStore() {
        store.stop().join();
    }

    private static ArtifactFile file(String path, String hex) {
        return new ArtifactFile("hf_tokenizer_json", path, hex, false);
    }

    private static final ArtifactStore.Options ALL = new ArtifactStore.Options(true, true);

    private @Nullable Path loaded(ArtifactFile f, ArtifactStore.Options options) {
        await().atMost(Duration.ofSeconds(10)).until(() -> store.request(f, options) != null
                || store.failure(f.blake3Hex()) != null);
        return store.ready(f.blake3Hex());
    }

    private double count(ArtifactResult r) {
        return registry.get(ArtifactMetrics.NAME).tag("result", r.label()).counter().count();
    }

    private int hitsOf(String path) {
        AtomicInteger n = hits.get(path);
        return n == null ? 0 : n.get();
    }

    @Test
    void aPinnedArtifactIsFetchedVerifiedAndCachedOwnerOnlyThenServedFromTheCache() throws Exception {
        store.retain(Set.of(TOKENIZER_HEX));
        ArtifactFile f = file(base + "/tokenizer.json", TOKENIZER_HEX);

        assertThat(store.request(f, ALL)).isNull(); // never on the caller's thread
        Path p = loaded(f, ALL);

        assertThat(p).isEqualTo(dir.resolve("blobs").resolve(TOKENIZER_HEX));
        assertThat(Files.readAllBytes(p)).isEqualTo(TOKENIZER);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p.getParent()))).isEqualTo("rwx------");
        assertThat(count(ArtifactResult.LOADED)).isEqualTo(1);

        store.stop().join();
        store = store(base + "/hf");
        store.start().join();
        store.retain(Set.of(TOKENIZER_HEX));
        assertThat(loaded(f, ALL)).isEqualTo(p);
        assertThat(count(ArtifactResult.CACHED)).isEqualTo(1);
        assertThat(hitsOf("/tokenizer.json")).isEqualTo(1);
    }

    @Test
    void anUnpinnedArtifactIsNeverFetched() {
        store.retain(Set.of("00".repeat(32)));

        assertThat(store.request(file(base + "/tokenizer.json", TOKENIZER_HEX), ALL)).isNull();
        assertThat(store.request(file(base + "/tokenizer.json", null), ALL)).isNull();

        assertThat(store.generation()).isZero();
        assertThat(hitsOf("/tokenizer.json")).isZero();
        assertThat(dir.resolve("blobs")).doesNotExist();
    }

    @Test
    void oversizedArtifactsAreRefusedByDeclaredSizeContentLengthAndWhileStreaming() {
        store.retain(Set.of(BIG_HEX));

        assertThat(loaded(new ArtifactFile("hf_tokenizer_json", base + "/big", BIG_HEX, false, (long) CAP + 1), ALL))
                .isNull();
        assertThat(hitsOf("/big")).isZero(); // refused from the card's size alone
        assertThat(store.failure(BIG_HEX)).isEqualTo(ArtifactResult.TOO_LARGE);

        nanos.addAndGet(ArtifactStore.RETRY_AFTER.toNanos());
        assertThat(loaded(file(base + "/big", BIG_HEX), ALL)).isNull();
        assertThat(hitsOf("/big")).isEqualTo(1);

        nanos.addAndGet(ArtifactStore.RETRY_AFTER.toNanos());
        assertThat(loaded(file(base + "/big-chunked", BIG_HEX), ALL)).isNull();
        assertThat(store.failure(BIG_HEX)).isEqualTo(ArtifactResult.TOO_LARGE);
        assertThat(count(ArtifactResult.TOO_LARGE)).isEqualTo(3);
        assertThat(dir.resolve("blobs").resolve(BIG_HEX)).doesNotExist();
    }

    @Test
    void aWrongChecksumIsNotCachedAndIsRetriedOnlyAfterFiveMinutesOfTheInjectedClock() {
        store.retain(Set.of(TOKENIZER_HEX));
        ArtifactFile f = file(base + "/wrong", TOKENIZER_HEX);

        assertThat(loaded(f, ALL)).isNull();
        assertThat(store.failure(TOKENIZER_HEX)).isEqualTo(ArtifactResult.CHECKSUM_MISMATCH);
        assertThat(dir.resolve("blobs").resolve(TOKENIZER_HEX)).doesNotExist();

        nanos.addAndGet(ArtifactStore.RETRY_AFTER.toNanos() - 1);
        assertThat(store.request(f, ALL)).isNull();
        assertThat(hitsOf("/wrong")).isEqualTo(1);

        nanos.addAndGet(1);
        store.request(f, ALL);
        await().atMost(Duration.ofSeconds(10)).until(() -> hitsOf("/wrong") == 2);
    }

    @Test
    void redirectsAreFollowedBoundedAndTheHubTokenGoesToTheHubHostOnly() {
        store.retain(Set.of(TOKENIZER_HEX, MOVED_HEX));

        assertThat(loaded(file(base + "/redirect", TOKENIZER_HEX), ALL)).isNotNull();
        assertThat(authorization.get("/tokenizer.json")).isEqualTo("none");

        assertThat(loaded(file("hf://org/repo/moved.json", MOVED_HEX), ALL)).isNotNull();
        assertThat(authorization.get("/hf/org/repo/resolve/main/moved.json")).isEqualTo("Bearer hf_secret");
        assertThat(authorization.get("/elsewhere.json")).isEqualTo("none");

        String loopHex = "11".repeat(32);
        store.retain(Set.of(loopHex));
        assertThat(loaded(file(base + "/loop", loopHex), ALL)).isNull();
        assertThat(store.failure(loopHex)).isEqualTo(ArtifactResult.FETCH_FAILED);
        assertThat(hitsOf("/loop")).isEqualTo(ArtifactFetcher.MAX_REDIRECTS + 1);
    }

    @Test
    void schemesNeedTheirSwitchAndLocalFilesAlwaysWork() throws Exception {
        store.retain(Set.of(TOKENIZER_HEX));
        ArtifactStore.Options none = new ArtifactStore.Options(false, false);

        assertThat(loaded(file(base + "/tokenizer.json", TOKENIZER_HEX), none)).isNull();
        assertThat(store.failure(TOKENIZER_HEX)).isEqualTo(ArtifactResult.DISALLOWED);
        nanos.addAndGet(ArtifactStore.RETRY_AFTER.toNanos());
        assertThat(loaded(file("hf://org/repo/tokenizer.json", TOKENIZER_HEX), none)).isNull();
        assertThat(hitsOf("/tokenizer.json") + hitsOf("/hf/org/repo/resolve/main/tokenizer.json")).isZero();

        Path local = Files.write(Files.createTempDirectory(dir, "card").resolve("tokenizer.json"), TOKENIZER);
        nanos.addAndGet(ArtifactStore.RETRY_AFTER.toNanos());
        assertThat(loaded(file(local.toUri().toString(), TOKENIZER_HEX), none)).isNotNull();
    }

    @Test
    void aBlobModifiedOnDiskIsEvictedAndARemovedPinDropsWhatItLoaded() throws Exception {
        store.retain(Set.of(TOKENIZER_HEX));
        ArtifactFile f = file(base + "/tokenizer.json", TOKENIZER_HEX);
        Path p = loaded(f, ALL);
        assertThat(p).isNotNull();
        Files.write(p, "tampered".getBytes(StandardCharsets.UTF_8));

        store.stop().join();
        store = store(base + "/hf");
        store.start().join();
        store.retain(Set.of(TOKENIZER_HEX));
        assertThat(loaded(f, ALL)).isEqualTo(p);
        assertThat(count(ArtifactResult.EVICTED)).isEqualTo(1);
        assertThat(Files.readAllBytes(p)).isEqualTo(TOKENIZER);

        long generation = store.generation();
        store.retain(Set.of());
        assertThat(store.ready(TOKENIZER_HEX)).isNull();
        assertThat(store.generation()).isGreaterThan(generation);
        assertThat(store.request(f, ALL)).isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> !Files.exists(p));
    }
}
