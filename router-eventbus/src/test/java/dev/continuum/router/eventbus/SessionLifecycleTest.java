package dev.continuum.router.eventbus;

import static dev.continuum.router.eventbus.BusFixture.HELLO_A;
import static dev.continuum.router.eventbus.BusFixture.HELLO_B;
import static dev.continuum.router.eventbus.BusFixture.TOKEN_A;
import static dev.continuum.router.eventbus.BusFixture.TOKEN_B;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.util.ReferenceCountUtil;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Welcomed sessions over real TLS + HTTP/2, against one listener for the class: welcome and limits,
 * heartbeats, commanded data streams (accepted, 404, 409, 403, version), supersede, draining, idle timeout,
 * certificate authentication and reloads that revoke credentials or narrow grants.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionLifecycleTest {
    BusFixture bus;
    Path dir;

    @BeforeAll
    void start(@TempDir Path tmp) throws Exception {
        dir = tmp;
        bus = new BusFixture(tmp, "    heartbeat_interval: 1s\n    idle_timeout: 2s\n");
        bus.warmUp();
    }

    @AfterAll
    void stop() {
        bus.close();
    }

    @AfterEach
    void noSessionLeft() {
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(bus.listener.sessions().sessionCount()).isZero();
            assertThat(bus.listener.pendingSessionRequests()).isZero();
        });
    }

    private static JsonNode json(String line) throws Exception {
        return ControlJson.MAPPER.readTree(line);
    }

    /** Opens and welcomes a session; answers heartbeats so it stays. */
    private static BusTestClient.Exchange welcome(BusTestClient client, String token, String hello) throws Exception {
        BusTestClient.Exchange session = client.open(BusTestClient.session(token), false);
        session.sendLine(hello);
        assertThat(session.status()).isEqualTo("200");
        return session;
    }

    private static String nextOfType(BusTestClient.Exchange session, String type) throws Exception {
        for (int i = 0; i < 20; i++) {
            String line = session.nextLine();
            JsonNode node = json(line);
            if (node.path("type").asText().equals("heartbeat") && !type.equals("heartbeat")) {
                session.sendLine("{\"type\":\"heartbeat_ack\",\"seq\":" + node.path("seq").asLong() + "}");
                continue;
            }
            assertThat(node.path("type").asText()).isEqualTo(type);
            return line;
        }
        throw new AssertionError("no " + type);
    }

    private static Http2Headers streamHeaders(String token, String sessionId, String streamId) {
        return BusTestClient.post("/bus/v1/streams/" + streamId).set("continuum-bus-version", "1")
                .set("authorization", "Bearer " + token).set("continuum-bus-session", sessionId);
    }

    /** Echoes what the client sends back to it and records the acceptor's calls. */
    static final class EchoAcceptor implements StreamAcceptor {
        final CompletableFuture<Channel> opened = new CompletableFuture<>();
        final CompletableFuture<String> closed = new CompletableFuture<>();

        @Override
        public void opened(Channel stream) {
            stream.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                @Override
                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    if (msg instanceof Http2DataFrame data) {
                        ctx.writeAndFlush(new DefaultHttp2DataFrame(data.content().retain(), data.isEndStream()));
                    }
                    ReferenceCountUtil.release(msg);
                }
            });
            opened.complete(stream);
        }

        @Override
        public void closed(String code, String message) {
            closed.complete(code);
        }
    }

    @Test
    void welcomeCarriesTheSessionIdAndEffectiveLimitsAndHeartbeatsAreAcked() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_A, HELLO_A);
            JsonNode welcome = json(session.nextLine());
            assertThat(welcome.path("type").asText()).isEqualTo("welcome");
            assertThat(welcome.path("session_id").asText()).matches("sess-[0-9a-f]{32}");
            assertThat(welcome.path("version").asInt()).isEqualTo(1);
            JsonNode limits = welcome.path("limits");
            assertThat(limits.path("max_streams").asInt()).isEqualTo(1024);
            assertThat(limits.path("stream_buffer_bytes").asInt()).isEqualTo(16 * 1024);
            assertThat(limits.path("session_buffer_bytes").asLong()).isEqualTo(64L << 20);
            assertThat(limits.path("heartbeat_interval_ms").asLong()).isEqualTo(1000);
            assertThat(limits.path("idle_timeout_ms").asLong()).isEqualTo(2000);
            assertThat(bus.listener.sessions().covers("dynamo")).isTrue();
            assertThat(bus.listener.sessions().covers("other")).isFalse();

            session.sendLine("{\"type\":\"heartbeat\",\"seq\":7}");
            assertThat(json(nextOfType(session, "heartbeat_ack")).path("seq").asLong()).isEqualTo(7);
            JsonNode beat = json(session.nextLine());
            assertThat(beat.path("type").asText()).isEqualTo("heartbeat");

            session.send("", true);
            assertThat(session.trailers.get(5, TimeUnit.SECONDS).get("continuum-bus-close").toString())
                    .isEqualTo("client_closed");
        }
    }

    @Test
    void aCommandedStreamIsAcceptedOnceAndCarriesBytesBothWays() throws Exception {
        try (BusTestClient client = bus.client(); BusTestClient other = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_A, HELLO_A);
            String sessionId = json(session.nextLine()).path("session_id").asText();
            BusSession live = bus.listener.sessions().sessions().get(0);
            EchoAcceptor acceptor = new EchoAcceptor();
            CommandedStream commanded = live.subscribe(new SubscribeTarget.ZmqTcp("dynamo", "10.0.0.5", 5557), "",
                    acceptor);
            JsonNode subscribe = json(nextOfType(session, "subscribe"));
            assertThat(subscribe.path("stream_id").asText()).isEqualTo(commanded.streamId());
            assertThat(subscribe.path("target").path("kind").asText()).isEqualTo("zmq_tcp");
            assertThat(subscribe.path("target").path("port").asInt()).isEqualTo(5557);
            String id = commanded.streamId();

            // Never commanded, another session's credential, another version: refused, and the ID stays usable.
            BusTestClient.Exchange unknown = client.open(streamHeaders(TOKEN_A, sessionId, "st-00000000000000ff"), true);
            assertThat(unknown.status()).isEqualTo("404");
            assertThat(unknown.errorCode()).isEqualTo("unknown_stream");
            BusTestClient.Exchange foreign = other.open(streamHeaders(TOKEN_B, sessionId, id), true);
            assertThat(foreign.status()).isEqualTo("403");
            assertThat(foreign.errorCode()).isEqualTo("forbidden");
            assertThatThrownBy(() -> live.subscribe(new SubscribeTarget.ZmqTcp("other", "10.0.0.5", 1), "", acceptor))
                    .isInstanceOf(BusCommandException.class);

            // Opened from a second connection of the same credential: accepted, bytes echo through the acceptor.
            BusTestClient second = bus.client();
            try (second) {
                BusTestClient.Exchange data = second.open(streamHeaders(TOKEN_A, sessionId, id), false);
                assertThat(data.status()).isEqualTo("200");
                acceptor.opened.get(5, TimeUnit.SECONDS);
                data.send("ping\n", false);
                assertThat(data.nextLine()).isEqualTo("ping");

                BusTestClient.Exchange again = client.open(streamHeaders(TOKEN_A, sessionId, id), true);
                assertThat(again.status()).isEqualTo("409");
                assertThat(again.errorCode()).isEqualTo("duplicate_stream");

                commanded.unsubscribe();
                assertThat(json(nextOfType(session, "unsubscribe")).path("stream_id").asText()).isEqualTo(id);
                data.closed.get(5, TimeUnit.SECONDS);
                assertThat(acceptor.closed.get(5, TimeUnit.SECONDS)).isEqualTo("unsubscribed");
            }
            session.send("", true);
        }
    }

    @Test
    void streamClosedConsumesTheIdAndDrainingUncoversTheNamespace() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_A, HELLO_A);
            String sessionId = json(session.nextLine()).path("session_id").asText();
            BusSession live = bus.listener.sessions().sessions().get(0);
            EchoAcceptor refused = new EchoAcceptor();
            CommandedStream stream = live.subscribe(new SubscribeTarget.ZmqTcp("dynamo", "10.0.0.6", 5557), "t",
                    refused);
            nextOfType(session, "subscribe");
            session.sendLine("{\"type\":\"stream_closed\",\"stream_id\":\"" + stream.streamId()
                    + "\",\"code\":\"target_not_advertised\",\"message\":\"no\\u0007such\"}");
            assertThat(refused.closed.get(5, TimeUnit.SECONDS)).isEqualTo("target_not_advertised");
            BusTestClient.Exchange late = client.open(streamHeaders(TOKEN_A, sessionId, stream.streamId()), true);
            assertThat(late.status()).isEqualTo("409");

            EchoAcceptor moved = new EchoAcceptor();
            live.subscribe(new SubscribeTarget.ZmqTcp("dynamo", "10.0.0.7", 5557), "", moved);
            nextOfType(session, "subscribe");
            session.sendLine("{\"type\":\"draining\",\"reason\":\"SIGTERM\"}");
            nextOfType(session, "unsubscribe");
            assertThat(moved.closed.get(5, TimeUnit.SECONDS)).isEqualTo("unsubscribed");
            await().untilAsserted(() -> assertThat(bus.listener.sessions().covers("dynamo")).isFalse());
            assertThatThrownBy(() -> live.subscribe(new SubscribeTarget.ZmqTcp("dynamo", "h", 1), "", moved))
                    .isInstanceOf(BusCommandException.class)
                    .extracting(e -> ((BusCommandException) e).reason()).isEqualTo(BusCommandException.Reason.DRAINING);
            session.send("", true);
        }
    }

    @Test
    void aNewSessionOfTheSameEntrySupersedesTheOld() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange first = welcome(client, TOKEN_A, HELLO_A);
            BusTestClient.Exchange second = welcome(client, TOKEN_A, HELLO_A);
            assertThat(first.trailers.get(5, TimeUnit.SECONDS).get("continuum-bus-close").toString())
                    .isEqualTo("session_superseded");
            assertThat(bus.listener.sessions().sessionCount()).isEqualTo(1);
            second.send("", true);
        }
    }

    @Test
    void aSilentSessionEndsAtTheIdleTimeout() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_B, HELLO_B); // never answers a heartbeat
            assertThat(session.trailers.get(10, TimeUnit.SECONDS).get("continuum-bus-close").toString())
                    .isEqualTo("idle_timeout");
        }
    }

    @Test
    void aCertificateAuthenticatesItsEntryUntilTheClientCaIsReplaced() throws Exception {
        try (BusTestClient client = bus.client(bus.certs)) { // names broker-c.dynamo
            BusTestClient.Exchange session = welcome(client, null, HELLO_A.replace("broker-a\"", "broker-c.dynamo\""));
            assertThat(json(session.nextLine()).path("type").asText()).isEqualTo("welcome");
            assertThat(bus.listener.sessions().sessions().get(0).entryId()).isEqualTo("broker-c.dynamo");

            // A new CA file: the connection verified by the old generation loses its certificate identity.
            Path ca = dir.resolve("client-ca-2.pem");
            java.nio.file.Files.writeString(ca, java.nio.file.Files.readString(bus.clientCa) + "\n");
            bus.listener.apply(BusFixture.config(bus.yaml("    heartbeat_interval: 1s\n    idle_timeout: 2s\n")
                    .replace(bus.clientCa.toString(), ca.toString())));
            assertThat(session.trailers.get(5, TimeUnit.SECONDS).get("continuum-bus-close").toString())
                    .isEqualTo("credential_revoked");
            BusTestClient.Exchange again = client.open(BusTestClient.session(null), true);
            assertThat(again.status()).isEqualTo("401");
            assertThat(again.errorCode()).isEqualTo("credential_revoked");
        } finally {
            bus.listener.apply(BusFixture.config(bus.yaml("    heartbeat_interval: 1s\n    idle_timeout: 2s\n")));
        }
    }

    @Test
    void aReloadThatRemovesATokenRevokesItAndEndsItsSession() throws Exception {
        String withoutA = bus.yaml("    heartbeat_interval: 1s\n    idle_timeout: 2s\n")
                .replaceAll("(?m)^      - \\{id: broker-a\\.dynamo.*\\n", "");
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_A, HELLO_A);
            bus.listener.apply(BusFixture.config(withoutA));
            assertThat(session.trailers.get(5, TimeUnit.SECONDS).get("continuum-bus-close").toString())
                    .isEqualTo("credential_revoked");
            BusTestClient.Exchange again = client.open(BusTestClient.session(TOKEN_A), true);
            assertThat(again.status()).isEqualTo("401");
            assertThat(again.errorCode()).isEqualTo("credential_revoked");
        } finally {
            bus.listener.apply(BusFixture.config(bus.yaml("    heartbeat_interval: 1s\n    idle_timeout: 2s\n")));
        }
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange restored = welcome(client, TOKEN_A, HELLO_A);
            restored.send("", true);
        }
    }

    @Test
    void theConnectionWindowIsTheSessionBufferAndTheStreamWindowTheDerivedBuffer() throws Exception {
        try (BusTestClient client = bus.client()) {
            BusTestClient.Exchange session = welcome(client, TOKEN_A, HELLO_A);
            var codec = client.channel().pipeline().get(io.netty.handler.codec.http2.Http2FrameCodec.class);
            var connection = codec.connection();
            // The grant arrives right after the preface; the hello's bytes may still be in flight against it.
            await().untilAsserted(() -> assertThat(connection.remote().flowController()
                    .windowSize(connection.connectionStream())).isBetween((64 << 20) - 1024, 64 << 20));
            assertThat(connection.remote().flowController().initialWindowSize()).isEqualTo(16 * 1024);
            session.send("", true);
        }
    }
}
