package dev.continuum.router.eventbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.config.EventBusConfig;
import dev.continuum.router.eventbus.config.TokenHash;
import dev.continuum.router.testing.FreePorts;
import dev.continuum.router.testing.TestCertificates;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervisor that runs the listener in the router process: it starts only with both switches on, applies
 * credential reloads to the running listener, restarts it for a new address, stops it when switched off, retries
 * a listener that cannot bind, and keeps one {@link EventBus} whose coverage follows every change.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EventBusSupervisorTest {
    @TempDir
    Path dir;
    private TestCertificates certs;
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final EventBus bus = new EventBus();
    private EventBusSupervisor supervisor;

    @BeforeEach
    void setUp() {
        certs = TestCertificates.generate(dir.resolve("certs"), List.of("localhost", "127.0.0.1"));
        supervisor = new EventBusSupervisor(meters, bus, BusFixture.FAST, System::nanoTime, Duration.ofMillis(200));
    }

    @AfterEach
    void tearDown() {
        supervisor.stop().orTimeout(20, TimeUnit.SECONDS).join();
    }

    private EventBusConfig config(boolean enabled, int port, String brokers) {
        return BusFixture.config("dynamo:\n  enabled: true\n  event_bus:\n    enabled: " + enabled + "\n"
                + "    listen: \"127.0.0.1:" + port + "\"\n"
                + "    tls: {cert: \"" + certs.serverCert() + "\", key: \"" + certs.serverKey() + "\"}\n"
                + "    brokers:\n" + brokers);
    }

    private static String brokerA() {
        return "      - {id: broker-a.dynamo, client_id: broker-a, token_hash: \"" + TokenHash.of(BusFixture.TOKEN_A)
                + "\", namespaces: [dynamo]}\n";
    }

    private static String brokerB() {
        return "      - {id: broker-b.dynamo, token_hash: \"" + TokenHash.of(BusFixture.TOKEN_B) + "\"}\n";
    }

    private BusTestClient client() throws Exception {
        EventBusListener listener = supervisor.listener();
        assertThat(listener).isNotNull();
        return BusTestClient.connect(listener.localAddress(), BusTestClient.Tls.of(certs.caCert()));
    }

    @Test
    void startsOnlyWithBothSwitchesOnAndFollowsReloadsByTheirClass() throws Exception {
        AtomicInteger changes = new AtomicInteger();
        bus.onSessionsChanged(changes::incrementAndGet);
        int port = FreePorts.next();
        EventBusConfig enabled = config(true, port, brokerA() + brokerB());

        supervisor.reload(false, enabled); // dynamo.enabled: false
        supervisor.start().join();
        assertThat(supervisor.listener()).isNull();

        supervisor.reload(true, enabled);
        EventBusListener first = supervisor.listener();
        assertThat(first).isNotNull();
        assertThat(first.localAddress().getPort()).isEqualTo(port);

        try (BusTestClient client = client()) {
            BusTestClient.Exchange session = client.open(BusTestClient.session(BusFixture.TOKEN_A), false);
            session.sendLine(BusFixture.HELLO_A);
            assertThat(session.status()).isEqualTo("200");
            await().atMost(Duration.ofSeconds(5)).until(() -> bus.covers("dynamo"));
            assertThat(bus.sessions()).hasSize(1);

            // Credentials reload in place: the same listener, and broker-a's session ends as revoked.
            supervisor.reload(true, config(true, port, brokerB()));
            assertThat(supervisor.listener()).isSameAs(first);
            assertThat(session.trailers.get(5, TimeUnit.SECONDS).get("continuum-bus-close"))
                    .hasToString("credential_revoked");
            await().atMost(Duration.ofSeconds(5)).until(() -> !bus.covers("dynamo"));
        }

        // A new address restarts the listener; the old port is released.
        int second = FreePorts.next();
        supervisor.reload(true, config(true, second, brokerA()));
        EventBusListener restarted = supervisor.listener();
        assertThat(restarted).isNotNull().isNotSameAs(first);
        assertThat(restarted.localAddress().getPort()).isEqualTo(second);
        try (ServerSocket reuse = new ServerSocket()) {
            reuse.bind(new InetSocketAddress("127.0.0.1", port)); // free again
        }
        try (BusTestClient client = client()) {
            BusTestClient.Exchange session = client.open(BusTestClient.session(BusFixture.TOKEN_A), false);
            session.sendLine(BusFixture.HELLO_A);
            assertThat(session.status()).isEqualTo("200");
            await().atMost(Duration.ofSeconds(5)).until(() -> bus.covers("dynamo"));

            // Switched off: the listener stops, its sessions end, nothing is covered.
            int before = changes.get();
            supervisor.reload(true, config(false, second, brokerA()));
            assertThat(supervisor.listener()).isNull();
            assertThat(bus.covers("dynamo")).isFalse();
            assertThat(changes.get()).isGreaterThan(before);
            session.closed.get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void aListenerThatCannotBindIsRetriedWhileTheRouterRuns() throws Exception {
        int port = FreePorts.next();
        try (ServerSocket squatter = new ServerSocket()) {
            squatter.bind(new InetSocketAddress("127.0.0.1", port));
            supervisor.reload(true, config(true, port, brokerA()));
            supervisor.start().join(); // the router keeps starting
            assertThat(supervisor.listener()).isNull();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> supervisor.listener() != null);
        assertThat(supervisor.listener().localAddress().getPort()).isEqualTo(port);
    }

    @Test
    void theBusCoversNothingBeforeTheStartAndAfterTheStop() throws Exception {
        supervisor.reload(true, config(true, 0, brokerA()));
        assertThat(bus.covers("dynamo")).isFalse();
        supervisor.start().join();
        try (BusTestClient client = client()) {
            BusTestClient.Exchange session = client.open(BusTestClient.session(BusFixture.TOKEN_A), false);
            session.sendLine(BusFixture.HELLO_A);
            assertThat(session.status()).isEqualTo("200");
            await().atMost(Duration.ofSeconds(5)).until(() -> bus.covers("dynamo"));
            supervisor.stop().join();
            assertThat(bus.covers("dynamo")).isFalse();
            // The session ends; its shutting_down trailer is best effort while the connection closes.
            session.closed.get(5, TimeUnit.SECONDS);
            if (session.trailers.isDone()) {
                assertThat(session.trailers.join().get("continuum-bus-close")).hasToString("shutting_down");
            }
        }
    }
}
