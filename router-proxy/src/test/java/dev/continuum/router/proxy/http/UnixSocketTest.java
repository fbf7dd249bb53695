package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.BindAddress;
import dev.continuum.router.core.config.RateLimit;
import dev.continuum.router.core.config.RateLimitingConfig;
import dev.continuum.router.testing.TestUpstream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnixSocketTest {
    @RegisterExtension
    final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private final TestUpstream a = harness.upstream("a");
    private RouterHarness router;
    @TempDir
    Path dir;

    private static String exchange(Path socket, String request) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
            StringBuilder sb = new StringBuilder();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            while (ch.read(buf) >= 0) {
                buf.flip();
                sb.append(StandardCharsets.ISO_8859_1.decode(buf));
                buf.clear();
            }
            return sb.toString();
        }
    }

    @Test
    void servesHttpOverAUnixSocketAndCleansUpTheFile() throws Exception {
        Path socket = dir.resolve("router.sock");
        // A socket file left behind by an earlier process.
        try (ServerSocketChannel stale = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            stale.bind(UnixDomainSocketAddress.of(socket));
        }
        assertThat(socket).exists();
        List<Optional<InetSocketAddress>> remotes = new CopyOnWriteArrayList<>();
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", a.baseUrl(), "m");
        cfg.binds = List.of(new BindAddress.Tcp("127.0.0.1", 0), new BindAddress.Unix(socket));
        cfg.socketMode = 0660;
        // Unix-socket clients have no IP: the per-client limit cannot apply to them.
        cfg.rateLimiting = new RateLimitingConfig(true, new RateLimit(0.01, 1), null, null, null, List.of(), List.of());
        router = harness.start(cfg.build(), s -> s.routeExact("/health", req -> {
            remotes.add(Optional.ofNullable(req.remoteAddress()));
            return CompletableFuture.completedFuture(LocalResponse.text(200, "ok"));
        }));

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-rw----");
        String body = "{\"model\":\"m\"}";
        for (int i = 0; i < 3; i++) {
            String res = exchange(socket, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                    + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
            assertThat(res).startsWith("HTTP/1.1 200 OK").contains("\"upstream\":\"a\"");
        }
        assertThat(exchange(socket, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).contains("ok");
        assertThat(router.get("/health").statusCode()).isEqualTo(200);
        assertThat(remotes).hasSize(2);
        assertThat(remotes.get(0)).isEmpty();
        assertThat(remotes.get(1)).isPresent();

        router.server.stop().get(10, TimeUnit.SECONDS);
        assertThat(socket).doesNotExist();
    }
}
