package dev.continuum.router.eventbus;

import static dev.continuum.router.eventbus.BusFixture.HELLO_A;
import static dev.continuum.router.eventbus.BusFixture.TOKEN_A;
import static dev.continuum.router.eventbus.BusFixture.TOKEN_B;
import static dev.continuum.router.eventbus.BusFixture.TOKEN_KV;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.handler.codec.http2.Http2Headers;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.provider.Arguments;

/**
 * Every refusal of docs/event-bus-protocol.md sent as the exact bad input over a real TLS 1.3 + HTTP/2
 * connection (Netty's client) or a raw socket, against one listener for the class. Each checks the code and
 * status, and that no session slot or admission reservation stayed held; the leak extension checks buffers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ListenerRefusalTest {
    BusFixture bus;

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        bus = new BusFixture(dir, "    max_sessions: 2\n");
        bus.warmUp();
    }

    @AfterAll
    void stop() {
        bus.close();
    }

    @AfterEach
    void nothingHeld() {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(bus.listener.sessions().sessionCount()).isZero();
            assertThat(bus.listener.pendingSessionRequests()).isZero();
        });
    }

    private static InetSocketAddress address(BusFixture bus) {
        return bus.listener.localAddress();
    }

    @Test
    void plaintextHttpGetsA403JsonBodyAndTheTlsRequiredCode() throws Exception {
        try (Socket socket = new Socket()) {
            socket.connect(address(bus), 2000);
            socket.setSoTimeout(5000);
            socket.getOutputStream().write("GET /bus/v1/session HTTP/1.1\r\nhost: x\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(answer).startsWith("HTTP/1.1 403 Forbidden\r\n")
                    .contains("content-type: application/json")
                    .endsWith("{\"error\":{\"code\":\"tls_required\",\"message\":\"this port speaks HTTP/2 over TLS 1.3 only\"}}");
        }
    }

    @Test
    void aNonLetterNonHandshakeFirstByteIsClosedWithoutAnAnswer() throws Exception {
        double before = bus.listener.refusals(BusErrorCode.TLS_REQUIRED);
        try (Socket socket = new Socket()) {
            socket.connect(address(bus), 2000);
            socket.setSoTimeout(5000);
            socket.getOutputStream().write(new byte[] {0x05, 0x01, 0x00}); // a SOCKS greeting
            assertThat(socket.getInputStream().read()).isEqualTo(-1);
        }
        assertThat(bus.listener.refusals(BusErrorCode.TLS_REQUIRED)).isEqualTo(before + 1);
    }

    @Test
    void aSilentConnectionIsClosedAtTheHandshakeDeadline() throws Exception {
        double before = bus.listener.refusals(BusErrorCode.HANDSHAKE_TIMEOUT);
        try (Socket socket = new Socket()) {
            socket.connect(address(bus), 2000);
            socket.setSoTimeout(10_000);
            assertThat(socket.getInputStream().read()).isEqualTo(-1);
        }
        assertThat(bus.listener.refusals(BusErrorCode.HANDSHAKE_TIMEOUT)).isEqualTo(before + 1);
    }

    @Test
    void tls12IsRefusedInTheHandshake() throws Exception {
        BusTestClient client = BusTestClient.connect(address(bus),
                BusTestClient.Tls.of(bus.certs.caCert()).withProtocol("TLSv1.2"));
        try (client) {
            assertThatThrownBy(() -> client.handshake.get(5, TimeUnit.SECONDS)).hasRootCauseInstanceOf(
                    javax.net.ssl.SSLException.class);
        }
    }

    @Test
    void aClientWithoutH2IsClosedAfterTheHandshake() throws Exception {
        double before = bus.listener.refusals(BusErrorCode.HANDSHAKE_FAILED);
        BusTestClient client = BusTestClient.connect(address(bus),
                BusTestClient.Tls.of(bus.certs.caCert()).withAlpn("http/1.1"));
        try (client) {
            client.channel().closeFuture().await(5, TimeUnit.SECONDS);
            assertThat(client.channel().isActive()).isFalse();
        }
        await().untilAsserted(() -> assertThat(bus.listener.refusals(BusErrorCode.HANDSHAKE_FAILED))
                .isEqualTo(before + 1));
    }

    static Stream<Arguments> requestRefusals() {
        return Stream.of(
                Arguments.of("an unknown path", BusTestClient.post("/bus/v1/other").set("continuum-bus-version", "1")
                        .set("authorization", "Bearer " + TOKEN_A), "404", "not_found"),
                Arguments.of("GET on the session path", BusTestClient.session(TOKEN_A).method("GET"), "405",
                        "method_not_allowed"),
                Arguments.of("no version header", withoutVersion(), "400",
                        "unsupported_protocol_version"),
                Arguments.of("version 0", BusTestClient.session(TOKEN_A).set("continuum-bus-version", "0"), "400",
                        "unsupported_protocol_version"),
                Arguments.of("version 2", BusTestClient.session(TOKEN_A).set("continuum-bus-version", "2"), "400",
                        "unsupported_protocol_version"),
                Arguments.of("no credential", BusTestClient.session(null), "401", "unauthenticated"),
                Arguments.of("a wrong token", BusTestClient.session("not-a-token"), "401", "unauthenticated"),
                Arguments.of("a Basic authorization", BusTestClient.session(null).set("authorization", "Basic dTpw"),
                        "401", "unauthenticated"),
                Arguments.of("a stream of no session", BusTestClient.post("/bus/v1/streams/st-0000000000000001")
                        .set("continuum-bus-version", "1").set("authorization", "Bearer " + TOKEN_A)
                        .set("continuum-bus-session", "sess-00000000000000000000000000000000"), "404",
                        "unknown_stream"));
    }

    private static Http2Headers withoutVersion() {
        Http2Headers headers = BusTestClient.session(TOKEN_A);
        headers.remove("continuum-bus-version");
        return headers;
    }

    /** One connection, one stream per case: the cases share the handshake, not their streams. */
    @Test
    void everyRefusedRequestGetsItsStatusAndCode() throws Exception {
        try (BusTestClient client = bus.client()) {
            for (Arguments arguments : requestRefusals().toList()) {
                Object[] a = arguments.get();
                BusTestClient.Exchange exchange = client.open((Http2Headers) a[1], true);
                assertThat(exchange.status()).as((String) a[0]).isEqualTo(a[2]);
                assertThat(exchange.errorCode()).as((String) a[0]).isEqualTo(a[3]);
            }
        }
    }

    static Stream<Arguments> helloRefusals() {
        return Stream.of(
                Arguments.of("a line that is not JSON", TOKEN_A, "hello", "400", "invalid_message"),
                Arguments.of("another message first", TOKEN_A, "{\"type\":\"heartbeat\",\"seq\":1}", "400",
                        "invalid_message"),
                Arguments.of("the kv_listener role on a broker credential", TOKEN_A,
                        HELLO_A.replace("\"broker\"", "\"kv_listener\""), "403", "forbidden"),
                Arguments.of("another client_id", TOKEN_A, HELLO_A.replace("broker-a\"", "broker-z\""), "403",
                        "forbidden"),
                Arguments.of("a namespace outside the allowlist", TOKEN_A, HELLO_A.replace("[\"dynamo\"]",
                        "[\"dynamo\",\"other\"]"), "403", "forbidden"),
                Arguments.of("versions without the request's version", TOKEN_A, HELLO_A.replace("[1]", "[2]"), "400",
                        "unsupported_protocol_version"),
                Arguments.of("a broker announcing sources", TOKEN_A, HELLO_A.replace("}",
                        ",\"sources\":[{\"backend\":\"vllm-1\"}]}"), "403", "forbidden"),
                Arguments.of("a kv_listener without sources", TOKEN_KV, "{\"type\":\"hello\",\"role\":\"kv_listener\","
                        + "\"client_id\":\"kv-listener-a\",\"versions\":[1]}", "400", "invalid_message"),
                Arguments.of("a kv_listener announcing an ungranted backend", TOKEN_KV, "{\"type\":\"hello\","
                        + "\"role\":\"kv_listener\",\"client_id\":\"kv-listener-a\",\"versions\":[1],"
                        + "\"sources\":[{\"backend\":\"vllm-2\"}]}", "403", "forbidden"),
                Arguments.of("a kv_listener declaring namespaces", TOKEN_KV, "{\"type\":\"hello\","
                        + "\"role\":\"kv_listener\",\"client_id\":\"kv-listener-a\",\"versions\":[1],"
                        + "\"dynamo_namespaces\":[\"dynamo\"],\"sources\":[{\"backend\":\"vllm-1\"}]}", "403",
                        "forbidden"),
                Arguments.of("a line over 64 KiB", TOKEN_A, "{\"type\":\"hello\",\"pad\":\"" + "x".repeat(65_536)
                        + "\"}", "400", "invalid_message"));
    }

    @Test
    void everyRefusedHelloGetsItsStatusAndCodeAndReleasesItsReservation() throws Exception {
        try (BusTestClient client = bus.client()) {
            for (Arguments arguments : helloRefusals().toList()) {
                Object[] a = arguments.get();
                BusTestClient.Exchange exchange = client.open(BusTestClient.session((String) a[1]), false);
                exchange.sendLine((String) a[2]);
                assertThat(exchange.status()).as((String) a[0]).isEqualTo(a[3]);
                assertThat(exchange.errorCode()).as((String) a[0]).isEqualTo(a[4]);
                assertThat(bus.listener.pendingSessionRequests()).as((String) a[0]).isZero();
            }
        }
    }

    @Test
    void noHelloInTimeIs408AndReleasesTheReservation() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange exchange = client.open(BusTestClient.session(TOKEN_A), false);
            await().untilAsserted(() -> assertThat(bus.listener.pendingSessionRequests()).isEqualTo(1));
            assertThat(exchange.status()).isEqualTo("408");
            assertThat(exchange.errorCode()).isEqualTo("hello_timeout");
        }
    }

    @Test
    void aSecondWaitingRequestOfOneCredentialIsRefused() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange first = client.open(BusTestClient.session(TOKEN_A), false);
            await().untilAsserted(() -> assertThat(bus.listener.pendingSessionRequests()).isEqualTo(1));
            BusTestClient.Exchange second = client.open(BusTestClient.session(TOKEN_A), false);
            assertThat(second.status()).isEqualTo("429");
            assertThat(second.errorCode()).isEqualTo("too_many_sessions");
            first.sendLine(HELLO_A);
            assertThat(first.status()).isEqualTo("200");
            first.send("", true);
        }
    }

    @Test
    void maxSessionsCountsWaitingRequestsAndRefusesTheThirdCredential() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange a = client.open(BusTestClient.session(TOKEN_A), false);
            a.sendLine(HELLO_A);
            assertThat(a.status()).isEqualTo("200");
            BusTestClient.Exchange b = client.open(BusTestClient.session(TOKEN_B), false); // waits: holds slot 2
            await().untilAsserted(() -> assertThat(bus.listener.pendingSessionRequests()).isEqualTo(1));
            BusTestClient.Exchange kv = client.open(BusTestClient.session(TOKEN_KV), false);
            assertThat(kv.status()).isEqualTo("429");
            assertThat(kv.errorCode()).isEqualTo("too_many_sessions");
            b.send("", true);
            assertThat(b.status()).isEqualTo("400");
            a.send("", true);
        }
    }

    @Test
    void aTokenAndACertificateOfAnotherEntryAreForbidden() throws Exception {
        try (BusTestClient client = bus.client(bus.certs)) { // certificate names broker-c.dynamo
            BusTestClient.Exchange exchange = client.open(BusTestClient.session(TOKEN_A), true);
            assertThat(exchange.status()).isEqualTo("403");
            assertThat(exchange.errorCode()).isEqualTo("forbidden");
        }
    }

    @Test
    void aCertificateNamingTwoEntriesIsForbiddenAndAWildcardNamesNobody() throws Exception {
        try (BusTestClient client = bus.client(bus.certsTwo)) {
            BusTestClient.Exchange exchange = client.open(BusTestClient.session(null), true);
            assertThat(exchange.status()).isEqualTo("403");
            assertThat(exchange.errorCode()).isEqualTo("forbidden");
        }
        try (BusTestClient client = bus.client(bus.certsWildcard)) {
            BusTestClient.Exchange exchange = client.open(BusTestClient.session(null), true);
            assertThat(exchange.status()).isEqualTo("401");
            assertThat(exchange.errorCode()).isEqualTo("unauthenticated");
        }
    }

    @Test
    void aConnectionWithoutAnAcceptedRequestIsClosedAtTheAuthDeadline() throws Exception {
        double before = bus.listener.refusals(BusErrorCode.AUTH_TIMEOUT);
        try (BusTestClient client = bus.client()) {
            client.open(BusTestClient.session(null), true); // refused: does not count
            assertThat(client.channel().closeFuture().await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(bus.listener.refusals(BusErrorCode.AUTH_TIMEOUT)).isEqualTo(before + 1);
    }

    @Test
    void connectionsBeyondFourPerSessionSlotMinimumSixteenAreClosed() throws Exception {
        double before = bus.listener.refusals(BusErrorCode.CONNECTION_LIMIT);
        Socket[] sockets = new Socket[17];
        try {
            for (int i = 0; i < 16; i++) {
                sockets[i] = new Socket();
                sockets[i].connect(address(bus), 2000);
            }
            await().untilAsserted(() -> assertThat(bus.listener.connectionCount()).isEqualTo(16));
            sockets[16] = new Socket();
            sockets[16].connect(address(bus), 2000);
            sockets[16].setSoTimeout(5000);
            InputStream in = sockets[16].getInputStream();
            assertThat(in.read()).isEqualTo(-1);
            assertThat(bus.listener.refusals(BusErrorCode.CONNECTION_LIMIT)).isEqualTo(before + 1);
        } finally {
            for (Socket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
        await().untilAsserted(() -> assertThat(bus.listener.connectionCount()).isZero());
        try (Socket again = new Socket()) {
            again.connect(address(bus), 2000);
            OutputStream out = again.getOutputStream();
            out.write('G');
            again.setSoTimeout(5000);
            assertThat(again.getInputStream().read()).isEqualTo('H'); // served again: the plaintext refusal
        }
    }
}
