package dev.continuum.router.proxy.http;

import dev.continuum.router.core.config.RouterConfig;
import dev.continuum.router.proxy.BackendStatus;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Consumer;

/** A started router on a loopback port, a JDK HTTP/1.1 client, and the Prometheus registry. */
final class RouterHarness implements AutoCloseable {
    final HttpServer server;
    final PrometheusMeterRegistry registry;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    final int port;

    private RouterHarness(HttpServer server, PrometheusMeterRegistry registry) {
        this.server = server;
        this.registry = registry;
        this.port = ((InetSocketAddress) server.boundAddresses().get(0)).getPort();
    }

    static RouterHarness start(RouterConfig config) {
        return start(config, b -> { });
    }

    static RouterHarness start(RouterConfig config, Consumer<HttpServer.Builder> customize) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // A short drain by default so teardown is quick; tests of the drain itself set their own.
        HttpServer.Builder b = HttpServer.builder(config, registry).shutdownGrace(Duration.ofMillis(500));
        customize.accept(b);
        HttpServer server = b.build();
        server.start().join();
        return new RouterHarness(server, registry);
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    HttpResponse<String> post(String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("content-type", "application/json");
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> chat(String model, String... headers) {
        return post("/v1/chat/completions", "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
                headers);
    }

    HttpResponse<String> get(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(20)).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    BackendStatus backend(String name) {
        return server.proxy().backends().stream().filter(b -> b.name().equals(name)).findFirst().orElseThrow();
    }

    String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        server.stop().join();
    }
}
