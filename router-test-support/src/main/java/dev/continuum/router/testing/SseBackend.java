package dev.continuum.router.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;

/**
 * A real backend KV-event stream for tests: a JDK HTTP server whose {@code GET /kv/events} answers
 * {@code text/event-stream} and sends every published event with its ID (1, 2, ...), after the request's
 * {@code Last-Event-ID} when {@link #honorResume} is set (else from the start, as a backend that cannot replay
 * would). Each connection waits on the server's monitor for new events; {@link #dropAll} cuts every open one.
 * Given certificates it serves {@code https} (the JDK's TLS server with that certificate and key).
 */
public final class SseBackend implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final List<String> events = new CopyOnWriteArrayList<>();
    /** The Last-Event-ID of each request, in order ("" when absent). */
    private final List<String> resumes = new CopyOnWriteArrayList<>();
    private final Set<HttpExchange> open = ConcurrentHashMap.newKeySet();
    private volatile boolean honorResume = true;
    /** The status every request is answered with; anything but 200 comes with no body and no SSE type. */
    private volatile int status = 200;
    private volatile boolean closed;
    private final String scheme;

    public SseBackend() throws IOException {
        this(null);
    }

    /** @param tls the server certificate and key to serve https with; null for plain http */
    public SseBackend(@Nullable TestCertificates tls) throws IOException {
        this(tls, null);
    }

    /** @param protocols the only TLS versions the server speaks (null: the JDK's defaults) */
    public SseBackend(@Nullable TestCertificates tls, String @Nullable [] protocols) throws IOException {
        InetSocketAddress any = new InetSocketAddress("127.0.0.1", 0);
        if (tls == null) {
            server = HttpServer.create(any, 16);
        } else {
            HttpsServer https = HttpsServer.create(any, 16);
            JdkSslContext context = (JdkSslContext) SslContextBuilder.forServer(tls.serverCert().toFile(),
                    tls.serverKey().toFile()).sslProvider(SslProvider.JDK).build();
            https.setHttpsConfigurator(new HttpsConfigurator(context.context()) {
                @Override
                public void configure(HttpsParameters params) {
                    SSLParameters p = getSSLContext().getDefaultSSLParameters();
                    if (protocols != null) {
                        p.setProtocols(protocols);
                    }
                    params.setSSLParameters(p);
                }
            });
            server = https;
        }
        scheme = tls == null ? "http" : "https";
        server.setExecutor(threads);
        server.createContext("/kv/events", this::serve);
        server.start();
    }

    public URI url() {
        return url("127.0.0.1");
    }

    /** The stream's URL naming the server as {@code host} (it listens on 127.0.0.1). */
    public URI url(String host) {
        return URI.create(scheme + "://" + host + ":" + server.getAddress().getPort() + "/kv/events");
    }

    /** Publishes one event's JSON data; returns its ID. */
    public synchronized long publish(String json) {
        events.add(json);
        notifyAll();
        return events.size();
    }

    /** The Last-Event-ID of each request so far, in order ("" when absent). */
    public List<String> resumes() {
        return List.copyOf(resumes);
    }

    /** Whether a request's Last-Event-ID is honoured (else every stream starts from the first event). */
    public void honorResume(boolean honor) {
        honorResume = honor;
    }

    /** The status every later request is answered with (anything but 200: no body, no SSE type). */
    public void status(int code) {
        status = code;
    }

    public int openStreams() {
        return open.size();
    }

    /** Cuts every open stream (the connection closes mid-stream, as a backend restart or a network drop would). */
    public synchronized void dropAll() {
        for (HttpExchange e : open) {
            e.close();
        }
        open.clear();
        notifyAll();
    }

    private void serve(HttpExchange exchange) throws IOException {
        String last = exchange.getRequestHeaders().getFirst("Last-Event-ID");
        resumes.add(last == null ? "" : last);
        if (status != 200) {
            exchange.getResponseHeaders().set("Content-Type", "text/plain");
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
            return;
        }
        exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        open.add(exchange);
        int next = honorResume && last != null ? Integer.parseInt(last) : 0;
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(": connected\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            while (true) {
                String data;
                synchronized (this) {
                    while (!closed && open.contains(exchange) && next >= events.size()) {
                        wait();
                    }
                    if (closed || !open.contains(exchange)) {
                        return;
                    }
                    data = events.get(next);
                }
                next++;
                out.write(("id: " + next + "\r\ndata: " + data + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the client went away
        } finally {
            open.remove(exchange);
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        server.stop(0);
        threads.shutdownNow();
    }
}
