package dev.continuum.router.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real {@code nats-server} (Debian's package) on a free loopback port with JetStream on and its store in a temp
 * directory, started before the test class and removed after it; optionally requiring a token, or TLS with
 * client certificates. {@link #kill()} and {@link #start()} restart it on the same port and store, as an outage
 * would. There is no skipping: the project's test command installs the binary.
 * Register with {@code @RegisterExtension static NatsServerExtension nats = NatsServerExtension.plain()}.
 */
public final class NatsServerExtension implements BeforeAllCallback, AfterAllCallback {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private final @Nullable String token;
    private final boolean tls;
    private @Nullable Path directory;
    private @Nullable TestCertificates certificates;
    private int port;
    private int starts;
    private @Nullable Process process;

    private NatsServerExtension(@Nullable String token, boolean tls) {
        this.token = token;
        this.tls = tls;
    }

    public static NatsServerExtension plain() {
        return new NatsServerExtension(null, false);
    }

    /** Clients must present {@code token}. */
    public static NatsServerExtension withToken(String token) {
        return new NatsServerExtension(token, false);
    }

    /** TLS with client certificates required (certificates generated for 127.0.0.1 and localhost). */
    public static NatsServerExtension tls() {
        return new NatsServerExtension(null, true);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    /** Starts the server (idempotent when running) and waits until it accepts connections. */
    public synchronized void start() throws IOException {
        if (process != null && process.isAlive()) {
            return;
        }
        if (directory == null) {
            directory = Files.createTempDirectory("nats-test-");
            port = FreePorts.next();
            if (tls) {
                certificates = TestCertificates.generate(directory.resolve("certs"), List.of("127.0.0.1", "localhost"));
            }
        }
        starts++;
        Path log = directory.resolve("nats-" + starts + ".log");
        List<String> command = new ArrayList<>(List.of(binary().toString(), "-a", "127.0.0.1", "-p",
                String.valueOf(port), "-js", "-sd", directory.resolve("store").toString()));
        if (token != null) {
            command.addAll(List.of("--auth", token));
        }
        if (tls) {
            command.addAll(List.of("--tlsverify", "--tlscert", certificates().serverCert().toString(),
                    "--tlskey", certificates().serverKey().toString(), "--tlscacert", certificates().caCert().toString()));
        }
        Process started = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        process = started;
        Awaitility.await("nats-server on port " + port).atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    if (!started.isAlive()) {
                        throw new IllegalStateException("nats-server exited: " + Files.readString(log));
                    }
                    return Files.readString(log).contains("Server is ready") && accepts();
                });
    }

    /** SIGKILLs the server, as a crash would; the port and the JetStream store are kept for {@link #start()}. */
    public synchronized void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            process = null;
        }
    }

    /** Stops the server and deletes its directory. */
    public synchronized void stop() {
        if (process != null) {
            process.destroy();
            try {
                if (!process.waitFor(5, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
        if (directory != null) {
            try (Stream<Path> walk = Files.walk(directory)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            directory = null;
        }
    }

    /** {@code nats://127.0.0.1:PORT} (or {@code tls://} under TLS). */
    public String url() {
        return (tls ? "tls" : "nats") + "://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    public TestCertificates certificates() {
        if (certificates == null) {
            throw new IllegalStateException("this nats-server runs without TLS");
        }
        return certificates;
    }

    private boolean accepts() {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static Path binary() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path candidate = Path.of(dir, "nats-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        for (String dir : List.of("/usr/sbin", "/usr/bin")) {
            Path candidate = Path.of(dir, "nats-server");
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("nats-server is not installed (Debian: apt-get install nats-server; "
                + "bin/test installs it)");
    }
}
