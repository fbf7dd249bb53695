package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.RouterConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code timeouts.connection} end to end: the backend is a listening socket whose accept queue is full, so the
 * kernel drops the router's SYN and the connect neither succeeds nor fails on its own (a black hole on
 * loopback, no routing tricks). {@code server.connect_timeout} is set far beyond the test's own timeout, so
 * the request is answered in time only if the router applies {@code timeouts.connection}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectTimeoutTest {
    /** The fallback that must not apply; the test would time out waiting for it. */
    private static final String SERVER_CONNECT_TIMEOUT = "600s";

    private final List<Socket> fillers = new ArrayList<>();
    private ServerSocket hole;

    @AfterEach
    void closeAll() throws IOException {
        for (Socket s : fillers) {
            s.close();
        }
        if (hole != null) {
            hole.close();
        }
    }

    @Test
    void aBackendThatNeverAnswersTheHandshakeFailsAfterTheConfiguredConnectionTimeout() throws IOException {
        InetSocketAddress address = blackHole();
        RouterConfig config = ConfigLoader.builder().build().loadString("""
                server: {bind_address: "127.0.0.1:0", connect_timeout: %s}
                health_checks: {enabled: false}
                circuit_breaker: {enabled: false}
                retry: {enabled: false}
                timeouts: {connection: 300ms}
                backends:
                  - {name: hole, url: "http://127.0.0.1:%d", models: [m]}
                """.formatted(SERVER_CONNECT_TIMEOUT, address.getPort())).orThrow();

        try (RouterHarness router = RouterHarness.start(config)) {
            HttpResponse<String> r = router.post("/v1/chat/completions",
                    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

            assertThat(r.statusCode()).isEqualTo(502);
            assertThat(r.body()).contains("Could not connect to the upstream backend");
        }
    }

    /**
     * A listener with a backlog of one whose connections are never accepted, filled until a handshake no
     * longer completes: from then on Linux drops new SYNs while the queue is full.
     */
    private InetSocketAddress blackHole() throws IOException {
        hole = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), hole.getLocalPort());
        for (int i = 0; i < 64; i++) {
            Socket s = new Socket();
            try {
                s.connect(address, 250);
                fillers.add(s);
            } catch (SocketTimeoutException full) {
                s.close();
                return address;
            }
        }
        throw new IllegalStateException("the accept queue never filled; no black hole on this kernel");
    }
}
