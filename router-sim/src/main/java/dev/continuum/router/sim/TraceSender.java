package dev.continuum.router.sim;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * The replay harness's client: sends a trace's requests at their arrival times, {@code speedup} times faster,
 * without waiting for answers, and counts the answers that were not a {@code 200}. Where each request goes is the
 * caller's ({@link Route}), so the Dynamo fleet's and the plain vLLM servers' replays share the pacing.
 */
final class TraceSender {
    /** Sets a request's URI and headers, at its send time. */
    interface Route {
        void to(int index, HttpRequest.Builder request);
    }

    /** @param maxLagNanos the largest delay of a send past its due time (the harness's own lag) */
    record Outcome(int sent, int failed, long maxLagNanos) {
    }

    private TraceSender() {
    }

    /** Sends every request of {@code trace} (bodies from {@code bodies}) and waits for every answer. */
    static Outcome replay(MooncakeTrace trace, double speedup, HttpClient client, IntFunction<String> bodies,
            Route route) throws Exception {
        List<CompletableFuture<HttpResponse<Void>>> sent = new ArrayList<>();
        AtomicLong failed = new AtomicLong();
        long maxLag = 0;
        long start = System.nanoTime();
        long t0 = trace.requests().get(0).timestampMs();
        for (int i = 0; i < trace.requests().size(); i++) {
            MooncakeTrace.Request r = trace.requests().get(i);
            long due = start + Math.round((r.timestampMs() - t0) * 1e6 / speedup);
            for (long now = System.nanoTime(); now < due; now = System.nanoTime()) {
                LockSupport.parkNanos(due - now);
            }
            HttpRequest.Builder request = HttpRequest.newBuilder().timeout(Duration.ofMinutes(10))
                    .header("content-type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(bodies.apply(i)));
            route.to(i, request);
            maxLag = Math.max(maxLag, System.nanoTime() - due);
            sent.add(client.sendAsync(request.build(), HttpResponse.BodyHandlers.discarding())
                    .whenComplete((resp, e) -> {
                        if (e != null || resp.statusCode() != 200) {
                            failed.incrementAndGet();
                        }
                    }));
        }
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).exceptionally(e -> null)
                .get(30, TimeUnit.MINUTES);
        return new Outcome(sent.size(), (int) failed.get(), maxLag);
    }
}
