package dev.continuum.router.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.testing.RecordedRequest;
import dev.continuum.router.testing.TestUpstream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Request smuggling and framing: each case is raw bytes over a real socket to the real router with a
 * real upstream behind it. Every malformed case is followed on the same connection by a second,
 * well-formed request whose body says {@code SMUGGLED}: the router must answer the first one alone,
 * close, and never let the second reach the upstream. The cases Netty's codec refuses by itself and
 * the ones the router's own guards refuse are listed in {@code docs/request-path.md}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FramingMatrixTest {
    private static final String CHAT = "POST /v1/chat/completions HTTP/1.1\r\n";
    private static final String BODY = "{\"model\":\"m\"}";
    private static final String SMUGGLED_BODY = "{\"model\":\"m\",\"note\":\"SMUGGLED\"}";
    /** The request pipelined behind every malformed one. */
    private static final String SMUGGLED = CHAT + "Host: x\r\nContent-Type: application/json\r\nContent-Length: "
            + SMUGGLED_BODY.length() + "\r\n\r\n" + SMUGGLED_BODY;
    private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.[01] (\\d{3}) ");

    @RegisterExtension
    static final RouterExtension harness = RouterExtension.builder().upstream("a").build();
    private static final TestUpstream upstream = harness.upstream("a");
    private static RouterHarness router;

    @BeforeAll
    static void startRouter() {
        ConfigBuilder cfg = ConfigBuilder.create().backend("a", upstream.baseUrl(), "m");
        router = harness.start(cfg.build());
    }

    @BeforeEach
    void clearUpstream() {
        upstream.clearRecorded();
    }

    /** A malformed request, answered with {@code status} alone, then closed; the upstream sees nothing. */
    record Refused(String name, String request, int status) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** A well-formed (if unusual) request the router accepts; the upstream gets exactly {@code body}. */
    record Accepted(String name, String request, String body) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Refused> refused() {
        String chunked = "5\r\n{\"mod\r\n8\r\nel\":\"m\"}\r\n0\r\n\r\n";
        return Stream.of(
                // Content-Length and Transfer-Encoding together: the two framings disagree about where the body ends.
                new Refused("content-length with transfer-encoding", CHAT + "Host: x\r\nContent-Length: 4\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n" + chunked, 400),
                new Refused("transfer-encoding with content-length", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n"
                        + "Content-Length: 40\r\n\r\n" + chunked, 400),
                new Refused("duplicate content-length", CHAT + "Host: x\r\nContent-Length: 13\r\nContent-Length: 13\r\n\r\n"
                        + BODY, 400),
                new Refused("conflicting content-length", CHAT + "Host: x\r\nContent-Length: 13\r\nContent-Length: 6\r\n\r\n"
                        + BODY, 400),
                new Refused("content-length list", CHAT + "Host: x\r\nContent-Length: 13, 13\r\n\r\n" + BODY, 400),
                new Refused("signed content-length", CHAT + "Host: x\r\nContent-Length: +13\r\n\r\n" + BODY, 400),
                new Refused("negative content-length", CHAT + "Host: x\r\nContent-Length: -1\r\n\r\n" + BODY, 400),
                new Refused("content-length overflow", CHAT + "Host: x\r\nContent-Length: 99999999999999999999\r\n\r\n"
                        + BODY, 400),
                new Refused("transfer-encoding xchunked", CHAT + "Host: x\r\nTransfer-Encoding: xchunked\r\n\r\n"
                        + chunked, 400),
                new Refused("transfer-encoding chunked, identity", CHAT + "Host: x\r\n"
                        + "Transfer-Encoding: chunked, identity\r\n\r\n" + chunked, 400),
                new Refused("transfer-encoding identity", CHAT + "Host: x\r\nTransfer-Encoding: identity\r\n\r\n"
                        + chunked, 400),
                new Refused("transfer-encoding chunked twice", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n" + chunked, 400),
                new Refused("transfer-encoding gzip, chunked", CHAT + "Host: x\r\n"
                        + "Transfer-Encoding: gzip, chunked\r\n\r\n" + chunked, 501),
                new Refused("space before the colon", CHAT + "Host: x\r\nTransfer-Encoding : chunked\r\n\r\n" + chunked,
                        400),
                new Refused("tab before the colon", CHAT + "Host: x\r\nTransfer-Encoding\t: chunked\r\n\r\n" + chunked,
                        400),
                new Refused("negative chunk size", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n"
                        + "0\r\n\r\n", 400),
                new Refused("chunk size overflow", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "10000000000000005\r\nhello\r\n0\r\n\r\n", 400),
                new Refused("non-hex chunk size", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n"
                        + "0\r\n\r\n", 400),
                new Refused("oversized chunk extension", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n5;ext="
                        + "e".repeat(20_000) + "\r\nhello\r\n0\r\n\r\n", 400),
                new Refused("bare LF line endings", "POST /v1/chat/completions HTTP/1.1\nHost: x\nContent-Length: 13\n\n"
                        + BODY, 400),
                new Refused("bare CR in a header value", CHAT + "Host: x\r\nX-Note: a\rContent-Length: 13\r\n\r\n"
                        + BODY, 400),
                new Refused("NUL in a header value", CHAT + "Host: x\r\nX-Note: a\0b\r\nContent-Length: 13\r\n\r\n"
                        + BODY, 400),
                new Refused("oversized request line", "POST /v1/chat/completions?pad=" + "p".repeat(10_000)
                        + " HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n" + BODY, 414),
                new Refused("oversized header line", CHAT + "Host: x\r\nX-Pad: " + "p".repeat(20_000)
                        + "\r\nContent-Length: 13\r\n\r\n" + BODY, 431),
                new Refused("HTTP/1.1 without Host", CHAT + "Content-Length: 13\r\n\r\n" + BODY, 400),
                new Refused("HTTP/1.1 with two Host headers", CHAT + "Host: x\r\nHost: y\r\nContent-Length: 13\r\n\r\n"
                        + BODY, 400));
    }

    static Stream<Accepted> accepted() {
        String chunked = "5\r\n{\"mod\r\n8\r\nel\":\"m\"}\r\n0\r\n\r\n";
        return Stream.of(
                new Accepted("content-length", CHAT + "Host: x\r\nContent-Length: 13\r\n\r\n" + BODY, BODY),
                new Accepted("chunked", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked, BODY),
                new Accepted("chunked in upper case", CHAT + "Host: x\r\nTransfer-Encoding: CHUNKED\r\n\r\n" + chunked,
                        BODY),
                new Accepted("chunked with trailing whitespace", CHAT + "Host: x\r\nTransfer-Encoding: chunked \r\n\r\n"
                        + chunked, BODY),
                new Accepted("chunked after a tab", CHAT + "Host: x\r\nTransfer-Encoding:\tchunked\r\n\r\n" + chunked,
                        BODY),
                new Accepted("chunk extension within bounds", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "d;name=value\r\n" + BODY + "\r\n0\r\n\r\n", BODY),
                new Accepted("chunked with trailers", CHAT + "Host: x\r\nTransfer-Encoding: chunked\r\n\r\n" + "d\r\n"
                        + BODY + "\r\n0\r\nX-Trailer: t\r\n\r\n", BODY),
                // RFC 9112 section 5.2 lets a server replace obs-fold with spaces instead of refusing; Netty does.
                new Accepted("obs-fold", CHAT + "Host: x\r\nContent-Length: 13\r\nX-Note: a\r\n b\r\n\r\n" + BODY,
                        BODY),
                new Accepted("HTTP/1.0 without Host", "POST /v1/chat/completions HTTP/1.0\r\nContent-Length: 13\r\n\r\n"
                        + BODY, BODY));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusesAloneAndClosesTheConnection(Refused c) throws IOException {
        Exchange ex = send(c.request() + SMUGGLED);

        assertThat(ex.statuses()).as("responses").containsExactly(c.status());
        assertThat(ex.response()).containsIgnoringCase("connection: close");
        assertThat(ex.closed()).as("closed by the router").isTrue();
        assertThat(upstream.completionRequests()).as("requests the upstream received").isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void forwardsExactlyTheDecodedBody(Accepted c) throws IOException {
        // The smuggling probe is a legitimate second request here: both arrive, each with its own body.
        Exchange ex = send(c.request() + SMUGGLED.replace("Host: x\r\n", "Host: x\r\nConnection: close\r\n"));

        List<RecordedRequest> got = upstream.completionRequests();
        if (c.request().contains("HTTP/1.0")) {
            assertThat(ex.statuses()).containsExactly(200); // HTTP/1.0 closes after its response
            assertThat(got).extracting(RecordedRequest::body).containsExactly(c.body());
        } else {
            assertThat(ex.statuses()).as(ex.response()).containsExactly(200, 200);
            assertThat(got).extracting(RecordedRequest::body).containsExactly(c.body(), SMUGGLED_BODY);
            assertThat(got.get(0).header("content-length")).isEqualTo(Integer.toString(c.body().length()));
            assertThat(got.get(0).hasHeader("transfer-encoding")).isFalse();
        }
        assertThat(ex.closed()).isTrue();
    }

    /**
     * A folded line belongs to the header before it (RFC 9112 section 5.2 lets a server unfold instead of
     * refusing, and requires the same of any proxy in front, so none may read the fold as a header of its
     * own). Netty unfolds: the request has no body, is answered on its own, and the bytes after its head
     * are read as the next request, which here is malformed and refused. The upstream sees neither.
     */
    @org.junit.jupiter.api.Test
    void readsAFoldedTransferEncodingAsPartOfThePreviousHeader() throws IOException {
        String chunkedSmuggle = Integer.toHexString(SMUGGLED.length()) + "\r\n" + SMUGGLED + "\r\n0\r\n\r\n";
        Exchange ex = send(CHAT + "Host: x\r\nX-Note: a\r\n Transfer-Encoding: chunked\r\n\r\n" + chunkedSmuggle);

        assertThat(ex.statuses()).as(ex.response()).containsExactly(400, 400);
        assertThat(ex.response()).contains("invalid_request_error");
        assertThat(ex.closed()).isTrue();
        assertThat(upstream.completionRequests()).isEmpty();
    }

    record Exchange(String response, List<Integer> statuses, boolean closed) {
    }

    /** Writes {@code request} at once and reads until the router closes (or 5 s of silence). */
    static Exchange send(String request) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), router.port)) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(request.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            } catch (IOException e) {
                // The router may close before a large request is written; its answer is still readable.
            }
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            byte[] b = new byte[8192];
            boolean closed;
            try {
                int n;
                while ((n = in.read(b)) >= 0) {
                    buf.write(b, 0, n);
                }
                closed = true;
            } catch (SocketTimeoutException e) {
                closed = false;
            } catch (IOException e) {
                closed = true; // a reset after the answer still closes the connection
            }
            String text = buf.toString(StandardCharsets.ISO_8859_1);
            Matcher m = STATUS_LINE.matcher(text);
            List<Integer> statuses = new java.util.ArrayList<>();
            while (m.find()) {
                statuses.add(Integer.parseInt(m.group(1)));
            }
            return new Exchange(text, List.copyOf(statuses), closed);
        }
    }
}
