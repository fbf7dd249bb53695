package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelSubscription;
import dev.continuum.router.eventplane.SubscriptionState;
import static dev.continuum.router.load.Fixtures.hex;
import static dev.continuum.router.load.Fixtures.publisher;
import static dev.continuum.router.load.Fixtures.targets;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventplane.zmtp.ZmtpLimits;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile publishers from a raw socket: each one is refused (counted as transport_refused), never reaches
 * the connected state, and the subscription keeps reconnecting with backoff without holding more than its
 * idle buffer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostilePeerTest {
    static byte[] greeting(int major) {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.put((byte) 0xFF).put(new byte[8]).put((byte) 0x7F).put((byte) major).put((byte) 1);
        b.put("NULL".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        return b.array();
    }

    static byte[] handshake() {
        // greeting 3.1 NULL, then READY with Socket-Type PUB.
        return concat(greeting(3), hex("041a 05 5245414459 0b 536f636b65742d54797065 00000003 505542"));
    }

    static byte[] concat(byte[]... parts) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static Stream<Arguments> peers() {
        byte[] random = new byte[4096];
        new Random(42).nextBytes(random);
        random[0] = 0x12;
        byte[] endless = new byte[8 * 1024];
        return Stream.of(
                Arguments.of("an HTTP server (wrong signature)", "GET / HTTP/1.1\r\n\r\n".getBytes(), false),
                Arguments.of("a ZMTP 2.0 peer (wrong version)", greeting(2), false),
                Arguments.of("a frame declaring 2^63 bytes", concat(handshake(), hex("02 8000000000000000")), false),
                Arguments.of("a frame declaring 2^64-1 bytes", concat(handshake(), hex("02 ffffffffffffffff")), false),
                Arguments.of("endless metadata in READY", concat(greeting(3), hex("06 7fffffffffffffff"), endless), false),
                Arguments.of("a slowloris greeting", hex("ff00"), true),
                Arguments.of("random bytes", random, false),
                Arguments.of("random bytes after a good handshake", concat(handshake(), random), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("peers")
    void refusesAndBacksOff(String peer, byte[] script, boolean stall) throws Exception {
        AtomicInteger connections = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> serve(server, script, connections));
            t.setDaemon(true);
            t.start();
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            DefaultLoadSupervisor supervisor = (DefaultLoadSupervisor) LoadSupervisor.builder(registry)
                    .backoff(RealPublisherTest.FAST)
                    .limits(ZmtpLimits.KV_METRICS.withHandshakeTimeout(Duration.ofMillis(300)))
                    .stopGrace(Duration.ofSeconds(1)).build();
            supervisor.start().join();
            try {
                supervisor.update(targets(1, List.of(publisher(7, "tcp://127.0.0.1:" + server.getLocalPort())),
                        worker(1)));

                await().atMost(Duration.ofSeconds(20)).until(() ->
                        supervisor.metrics().total(LoadEventResult.TRANSPORT_REFUSED) >= 2 && connections.get() >= 2);
                ChannelSubscription s = supervisor.subscription(publisher(7, "").id());
                assertThat(s.state()).isNotEqualTo(SubscriptionState.CONNECTED);
                assertThat(s.retainedBufferBytes()).isLessThanOrEqualTo(ZmtpLimits.INITIAL_BUFFER_BYTES);
                assertThat(supervisor.store().size()).isZero();
            } finally {
                supervisor.stop().join();
            }
        }
    }

    private static void serve(ServerSocket server, byte[] script, AtomicInteger connections) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                connections.incrementAndGet();
                Thread t = new Thread(() -> {
                    try (s; OutputStream out = s.getOutputStream(); InputStream in = s.getInputStream()) {
                        out.write(script);
                        out.flush();
                        // Keep the connection open (a stalled peer) until the client closes it.
                        byte[] sink = new byte[256];
                        while (in.read(sink) >= 0) {
                            // discard
                        }
                    } catch (Exception e) {
                        // the client closed or reset: expected
                    }
                });
                t.setDaemon(true);
                t.start();
            } catch (Exception e) {
                return;
            }
        }
    }
}
