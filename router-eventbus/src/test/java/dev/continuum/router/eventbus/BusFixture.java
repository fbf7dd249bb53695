package dev.continuum.router.eventbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.eventbus.config.EventBusConfig;
import dev.continuum.router.eventbus.config.EventBusSection;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.testing.TestCertificates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One started listener with certificates and four credentials, shared by a test class:
 * {@code broker-a.dynamo} (token {@link #TOKEN_A}, namespaces [dynamo]), {@code broker-b.dynamo} (token
 * {@link #TOKEN_B}, any namespace), {@code kv-listener-a} (token {@link #TOKEN_KV}, backends [vllm-1]) and
 * {@code broker-c.dynamo} (certificate only).
 */
public final class BusFixture implements AutoCloseable {
    public static final String TOKEN_A = "token-a-0123456789";
    public static final String TOKEN_B = "token-b-0123456789";
    public static final String TOKEN_KV = "token-kv-0123456789";
    public static final String HELLO_A = "{\"type\":\"hello\",\"role\":\"broker\",\"client_id\":\"broker-a\",\"versions\":[1],"
            + "\"dynamo_namespaces\":[\"dynamo\"]}";
    public static final String HELLO_B = "{\"type\":\"hello\",\"role\":\"broker\",\"client_id\":\"broker-b.dynamo\","
            + "\"versions\":[1],\"dynamo_namespaces\":[\"other\"]}";
    public static final ListenerTimings FAST = new ListenerTimings(Duration.ofSeconds(4), Duration.ofSeconds(6),
            Duration.ofMillis(1200), Duration.ofSeconds(20), Duration.ofSeconds(30));

    public final Path dir;
    /** Server certificate, its CA, and a client certificate naming broker-c.dynamo. */
    public final TestCertificates certs;
    /** A second CA, also trusted, whose client certificate names broker-a.dynamo. */
    public final TestCertificates certsA;
    /** A client certificate naming broker-a.dynamo and broker-b.dynamo at once. */
    public final TestCertificates certsTwo;
    /** A wildcard certificate (*.dynamo). */
    public final TestCertificates certsWildcard;
    public final Path clientCa;
    public final EventBusListener listener;
    public final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final String extraYaml;

    public BusFixture(Path dir, String extraYaml) {
        this.dir = dir;
        this.extraYaml = extraYaml;
        certs = TestCertificates.generate(dir.resolve("main"), List.of("localhost", "127.0.0.1"),
                List.of("broker-c.dynamo"));
        certsA = TestCertificates.generate(dir.resolve("a"), List.of("localhost"), List.of("broker-a.dynamo"));
        certsTwo = TestCertificates.generate(dir.resolve("two"), List.of("localhost"),
                List.of("broker-a.dynamo", "broker-b.dynamo"));
        certsWildcard = TestCertificates.generate(dir.resolve("wild"), List.of("localhost"), List.of("*.dynamo"));
        clientCa = dir.resolve("client-ca.pem");
        try {
            Files.writeString(clientCa, Files.readString(certs.caCert()) + Files.readString(certsA.caCert())
                    + Files.readString(certsTwo.caCert()) + Files.readString(certsWildcard.caCert()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        listener = new EventBusListener(config(yaml(extraYaml)), FAST, meters, System::nanoTime, 1);
        listener.start().orTimeout(10, TimeUnit.SECONDS).join();
    }

    /** A started, warmed-up fixture whose sessions {@code bus} follows (the transport and relay tests' setup). */
    public static BusFixture attached(Path dir, String extraYaml, EventBus bus) throws Exception {
        BusFixture fixture = new BusFixture(dir, extraYaml);
        fixture.warmUp();
        bus.attach(fixture.listener.sessions());
        return fixture;
    }

    /**
     * After a test: closes what it opened, newest first, forgets them, and waits until the listener holds no
     * session, so the next test starts from an empty listener.
     */
    public void closeAll(List<AutoCloseable> opened) throws Exception {
        for (int i = opened.size() - 1; i >= 0; i--) {
            opened.get(i).close();
        }
        opened.clear();
        await().atMost(Duration.ofSeconds(10)).until(() -> listener.sessions().sessionCount() == 0);
    }

    public String yaml(String extra) {
        return "backends: [{name: vllm-1, url: \"http://127.0.0.1:8000\"}]\n"
                + "dynamo:\n  enabled: true\n  event_bus:\n    enabled: true\n    listen: \"127.0.0.1:0\"\n"
                + "    tls: {cert: \"" + certs.serverCert() + "\", key: \"" + certs.serverKey() + "\", client_ca: \""
                + clientCa + "\"}\n"
                + "    brokers:\n"
                + "      - {id: broker-a.dynamo, client_id: broker-a, token_hash: \"" + TokenHash.of(TOKEN_A)
                + "\", namespaces: [dynamo]}\n"
                + "      - {id: broker-b.dynamo, token_hash: \"" + TokenHash.of(TOKEN_B) + "\"}\n"
                + "      - {id: kv-listener-a, role: kv_listener, token_hash: \"" + TokenHash.of(TOKEN_KV)
                + "\", backends: [vllm-1]}\n"
                + "      - {id: broker-c.dynamo, namespaces: [dynamo]}\n"
                + extra;
    }

    public static EventBusConfig config(String yaml) {
        EventBusSection section = new EventBusSection();
        LoadResult result = ConfigLoader.builder().dynamoSection(section).build().loadString(yaml);
        assertThat(result.errors()).isEmpty();
        return result.orThrow().dynamo().section(section);
    }

    public BusTestClient client() throws Exception {
        return BusTestClient.connect(listener.localAddress(), BusTestClient.Tls.of(certs.caCert()));
    }

    public BusTestClient client(TestCertificates clientCert) throws Exception {
        return BusTestClient.connect(listener.localAddress(), BusTestClient.Tls.of(certs.caCert())
                .withCertificate(clientCert.clientCert(), clientCert.clientKey()));
    }

    /**
     * One full TLS + HTTP/2 exchange before the tests, so class loading and the first handshake's key work do
     * not eat into the short deadlines of {@link #FAST} (on a busy 2-core machine the first handshake can take
     * longer than the deadline; the second attempt then succeeds).
     */
    public void warmUp() throws Exception {
        for (int attempt = 1; ; attempt++) {
            try (BusTestClient client = client()) {
                BusTestClient.Exchange exchange = client.open(BusTestClient.session(null), true);
                exchange.closed.get(10, TimeUnit.SECONDS);
                return;
            } catch (Exception e) { // the handshake deadline closed a cold first connection
                if (attempt == 3) {
                    throw e;
                }
            }
        }
    }

    @Override
    public void close() {
        listener.stop().orTimeout(10, TimeUnit.SECONDS).join();
    }
}
