package dev.continuum.router.bench;

import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.proxy.RequestBodyInspection;
import dev.continuum.router.proxy.UntrustedHeaders;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.ShimConfig;
import dev.continuum.router.shim.ShimDispatcher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Header pinning and the trust boundary.
 * <ul>
 *   <li>{@code shimPlan}: {@code ShimDispatcher.plan} for one chat completion on the 8-rank fleet of
 *       {@link PickerBenchmark}: pool selection, the prompt-token estimate (a second streaming parse of the
 *       4 KiB body), the pick, and the {@code x-dynamo-*} pin headers (instance IDs in decimal, dp ranks);
 *       the plan then ends as served.</li>
 *   <li>{@code stripCleanHeaders}: {@code UntrustedHeaders.strip} over a typical client request's 12 headers
 *       with nothing to strip (the common case: it only scans).</li>
 *   <li>{@code stripSpoofedHeaders}: the same headers plus four pinning headers a client tried to send
 *       ({@code x-dynamo-*} and an older alias); each operation first copies the headers (that copy is
 *       included in the time) and then strips them.</li>
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HeaderPinningBenchmark {
    private static final long SAMPLED_AT = TimeUnit.SECONDS.toNanos(10);

    private long clock;
    private KvMetricsFeed feed;
    private ShimDispatcher dispatcher;
    private ByteBuf body;
    private DispatchRequest request;
    private HttpHeaders clean;
    private HttpHeaders spoofed;

    @Setup
    public void setup() throws Exception {
        List<DynamoWorker> workers = Fleets.disaggregated(8);
        Set<WorkerId> live = new HashSet<>();
        workers.forEach(w -> live.add(w.id()));
        clock = SAMPLED_AT;
        feed = new KvMetricsFeed(live, () -> clock);
        long v = 0;
        for (DynamoWorker w : workers) {
            for (int r = 0; r < Fleets.dpSize(8); r++, v++) {
                feed.publish(w.instanceId(), r, (v * 37 + r) % 500, (v * 7919 + r) % 4000);
            }
        }
        clock = SAMPLED_AT - TimeUnit.MILLISECONDS.toNanos(1);
        DynamoSnapshot snapshot = Fleets.snapshot(workers);
        ShimConfig shim = new ShimConfig(List.of(), List.of(new ShimConfig.Pool(Fleets.NS, List.of("shim-a",
                "shim-b"))), Map.of());
        DynamoWorkerPicker picker = DynamoWorkerPicker.loadBased(feed.store(), () -> clock, new SimpleMeterRegistry());
        dispatcher = ShimDispatcher.create(() -> snapshot, () -> shim, picker, new SimpleMeterRegistry());
        body = Unpooled.wrappedBuffer(ChatBodies.chatCompletion());
        request = new DispatchRequest(ChatBodies.MODEL, true, List.of("frontend-a", "shim-a", "shim-b"), body,
                RequestBodyInspection.estimatedPromptTokens(body));
        DispatchPlan plan = dispatcher.plan(request, null);
        if (plan == null || !plan.upstreamHeaders().containsKey("x-dynamo-prefill-instance-id")) {
            throw new IllegalStateException("no prefill/decode plan: " + plan);
        }
        plan.listener().ended(DispatchPlan.Outcome.SERVED);

        clean = DefaultHttpHeadersFactory.headersFactory().newHeaders();
        clean.add("host", "router.inference.example.com")
                .add("user-agent", "OpenAI/Python 1.54.4")
                .add("accept", "text/event-stream")
                .add("accept-encoding", "gzip, deflate")
                .add("content-type", "application/json")
                .add("content-length", Integer.toString(body.readableBytes()))
                .add("authorization", "Bearer ck-live-0123456789abcdef0123456789abcdef")
                .add("x-request-id", "5f0c1e0a-8d2b-4c55-9a3e-0d4f3b2a1c9e")
                .add("x-stainless-lang", "python")
                .add("x-stainless-retry-count", "0")
                .add("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                .add("x-tenant-id", "team-inference");
        spoofed = DefaultHttpHeadersFactory.headersFactory().newHeaders().set(clean)
                .add("x-dynamo-worker-instance-id", "7")
                .add("x-dynamo-dp-rank", "0")
                .add("X-Dynamo-Prefill-Instance-Id", "8")
                .add("x-worker-instance-id", "7");
    }

    @TearDown
    public void tearDown() throws Exception {
        body.release();
        feed.close();
    }

    @Benchmark
    public void shimPlan(Blackhole bh) {
        DispatchPlan plan = Objects.requireNonNull(dispatcher.plan(request, null)); // setup saw the fleet's plan
        bh.consume(plan.upstreamHeaders());
        plan.listener().ended(DispatchPlan.Outcome.SERVED);
    }

    @Benchmark
    public HttpHeaders stripCleanHeaders() {
        UntrustedHeaders.strip(clean);
        return clean;
    }

    @Benchmark
    public HttpHeaders stripSpoofedHeaders() {
        HttpHeaders h = DefaultHttpHeadersFactory.headersFactory().newHeaders().set(spoofed);
        UntrustedHeaders.strip(h);
        return h;
    }
}
