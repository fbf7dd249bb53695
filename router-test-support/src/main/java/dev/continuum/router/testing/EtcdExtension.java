package dev.continuum.router.testing;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.grpc.netty.GrpcSslContexts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real single-member etcd (Debian's {@code etcd-server}) on free loopback ports in a temp directory, started
 * before the test class and removed after it. Optionally with TLS (certificates generated at test time,
 * client certificates required) and with authentication (a {@code root} user for the test's writes and a
 * read-only {@code router} user on {@code v1/}).
 *
 * <p>There is no skipping: a test that needs etcd fails when the binary is missing, because the project's
 * test command installs it. Register with {@code @RegisterExtension static EtcdExtension etcd = ...}.
 */
public final class EtcdExtension implements BeforeAllCallback, AfterAllCallback {
    public static final String ROOT_PASSWORD = "root-secret";
    public static final String READER_USER = "router";
    public static final String READER_PASSWORD = "router-secret";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

    private final boolean tls;
    private final boolean auth;
    private final List<String> serverNames;
    private @Nullable Path directory;
    private @Nullable TestCertificates certificates;
    private int clientPort;
    private int peerPort;
    private @Nullable Process process;
    private int starts;
    private @Nullable Client writer;
    private boolean authEnabled;

    private EtcdExtension(boolean tls, boolean auth, List<String> serverNames) {
        this.tls = tls;
        this.auth = auth;
        this.serverNames = List.copyOf(serverNames);
    }

    public static EtcdExtension plain() {
        return new EtcdExtension(false, false, List.of("127.0.0.1", "localhost"));
    }

    /** TLS with client-certificate authentication; the server certificate is valid for {@code serverNames}. */
    public static EtcdExtension tls(String... serverNames) {
        return new EtcdExtension(true, false, serverNames.length == 0 ? List.of("127.0.0.1", "localhost")
                : List.of(serverNames));
    }

    /** Plaintext with authentication enabled. */
    public static EtcdExtension withAuth() {
        return new EtcdExtension(false, true, List.of("127.0.0.1", "localhost"));
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    /** Starts etcd (idempotent when running). Throws when the binary is not installed. */
    public synchronized void start() throws IOException, InterruptedException {
        if (process != null && process.isAlive()) {
            return;
        }
        Path binary = findOnPath("etcd");
        if (directory == null) {
            directory = Files.createTempDirectory("etcd-test-");
            clientPort = FreePorts.next();
            peerPort = FreePorts.next();
            if (tls) {
                certificates = TestCertificates.generate(directory.resolve("certs"), serverNames);
            }
        }
        starts++;
        Path log = directory.resolve("etcd-" + starts + ".log");
        List<String> command = new ArrayList<>(List.of(binary.toString(),
                "--name", "test",
                "--data-dir", directory.resolve("data").toString(),
                "--listen-client-urls", clientUrl(),
                "--advertise-client-urls", clientUrl(),
                "--listen-peer-urls", "http://127.0.0.1:" + peerPort,
                "--initial-advertise-peer-urls", "http://127.0.0.1:" + peerPort,
                "--initial-cluster", "test=http://127.0.0.1:" + peerPort,
                "--initial-cluster-state", "new"));
        if (tls) {
            command.addAll(List.of("--cert-file", certificates().serverCert().toString(),
                    "--key-file", certificates().serverKey().toString(),
                    "--trusted-ca-file", certificates().caCert().toString(),
                    "--client-cert-auth"));
        }
        Process started = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        process = started;
        awaitReady(started, log);
        if (auth && starts == 1) {
            enableAuth();
        }
    }

    /** Stops etcd (SIGTERM, then SIGKILL), closes the writer and deletes the directory. */
    public synchronized void stop() {
        closeWriter();
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
            deleteRecursively(directory);
            directory = null;
        }
    }

    /** SIGKILLs etcd, as a crash would; data and ports are kept for {@link #start()}. */
    public synchronized void kill() throws InterruptedException {
        closeWriter();
        if (process != null) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            process = null;
        }
    }

    public String endpoint() {
        return clientUrl();
    }

    public boolean isTls() {
        return tls;
    }

    public TestCertificates certificates() {
        if (certificates == null) {
            throw new IllegalStateException("this etcd runs without TLS");
        }
        return certificates;
    }

    /**
     * A jetcd client with full rights (the {@code root} user under auth, the test client certificate under
     * TLS): the tests' stand-in for Dynamo workers, which register, hold leases and write keys.
     */
    public synchronized Client writer() {
        if (writer == null) {
            ClientBuilder builder = Client.builder().endpoints(clientUrl());
            if (tls) {
                try {
                    builder.sslContext(GrpcSslContexts.forClient().trustManager(certificates().caCert().toFile())
                            .keyManager(certificates().clientCert().toFile(), certificates().clientKey().toFile()).build());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                if (!serverNames.contains("127.0.0.1")) {
                    builder.authority(serverNames.get(0));
                }
            }
            if (auth) {
                builder.user(bytes("root")).password(bytes(ROOT_PASSWORD));
            }
            writer = builder.build();
        }
        return writer;
    }

    /** The store's current revision. */
    public long revision() throws Exception {
        return writer().getKVClient().get(bytes("revision-probe")).get(10, TimeUnit.SECONDS).getHeader().getRevision();
    }

    /** Writes {@code value} under {@code key} (no lease). */
    public long put(String key, String value) throws Exception {
        return writer().getKVClient().put(bytes(key), bytes(value)).get(10, TimeUnit.SECONDS).getHeader().getRevision();
    }

    public void delete(String key) throws Exception {
        writer().getKVClient().delete(bytes(key)).get(10, TimeUnit.SECONDS);
    }

    /** Compacts the history up to {@code revision}: watches from older revisions are cancelled. */
    public void compact(long revision) throws Exception {
        writer().getKVClient().compact(revision).get(10, TimeUnit.SECONDS);
    }

    /** Runs {@code etcdctl} against this server with full rights; returns its output. */
    public String etcdctl(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(findOnPath("etcdctl").toString(), "--endpoints", clientUrl(),
                "--command-timeout=10s"));
        if (tls) {
            command.addAll(List.of("--cacert", certificates().caCert().toString(), "--cert",
                    certificates().clientCert().toString(), "--key", certificates().clientKey().toString()));
        }
        if (auth && starts > 0 && authEnabled) {
            command.addAll(List.of("--user", "root:" + ROOT_PASSWORD));
        }
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ETCDCTL_API", "3");
        Process etcdctl = builder.start();
        String output = new String(etcdctl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!etcdctl.waitFor(20, TimeUnit.SECONDS) || etcdctl.exitValue() != 0) {
            throw new IllegalStateException("etcdctl " + String.join(" ", args) + " failed: " + output);
        }
        return output;
    }

    private void enableAuth() throws IOException, InterruptedException {
        etcdctl("user", "add", "root:" + ROOT_PASSWORD);
        etcdctl("role", "add", "root");
        etcdctl("user", "grant-role", "root", "root");
        etcdctl("user", "add", READER_USER + ":" + READER_PASSWORD);
        etcdctl("role", "add", "dynamo-reader");
        etcdctl("role", "grant-permission", "dynamo-reader", "read", "--prefix=true", "v1/");
        etcdctl("user", "grant-role", READER_USER, "dynamo-reader");
        etcdctl("auth", "enable");
        authEnabled = true;
    }

    private String clientUrl() {
        return (tls ? "https" : "http") + "://127.0.0.1:" + clientPort;
    }

    private void awaitReady(Process started, Path log) throws IOException {
        try {
            Awaitility.await("etcd ready").atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        if (!started.isAlive()) {
                            throw new IllegalStateException("etcd exited with " + started.exitValue() + ":\n"
                                    + Files.readString(log));
                        }
                        return Files.exists(log) && Files.readString(log).contains("ready to serve client requests");
                    });
        } catch (ConditionTimeoutException e) {
            throw new IllegalStateException("etcd not ready within " + START_TIMEOUT.toSeconds() + " s:\n"
                    + Files.readString(log), e);
        }
    }

    private void closeWriter() {
        if (writer != null) {
            writer.close();
            writer = null;
        }
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    private static Path findOnPath(String name) {
        String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(java.io.File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        throw new IllegalStateException("'" + name + "' is not installed: the tests need a real etcd (Debian packages "
                + "etcd-server and etcd-client; bin/test installs them)");
    }

    private static void deleteRecursively(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // A temp directory left behind is not a test failure.
        }
    }
}
