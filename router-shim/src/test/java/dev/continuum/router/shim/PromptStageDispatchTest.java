package dev.continuum.router.shim;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.GlobalPromptsConfig;
import dev.continuum.router.proxy.prompts.ChatRewrite;
import dev.continuum.router.proxy.ChatRewrites;
import dev.continuum.router.proxy.DispatchHook;
import dev.continuum.router.proxy.DispatchPlan;
import dev.continuum.router.proxy.DispatchRequest;
import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The dispatcher's side of the prompt seam, without router-kv: what it hands a {@link PromptStage}, what the picker
 * hears of each answer, when the token-data body is pinned, and that a stage answering a fallback costs the
 * dispatch no allocation. The stage here is a stand-in (the real one is router-kv's KvPromptStage, tested there
 * behind this same dispatcher); the picker records its requests and pins worker 1.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PromptStageDispatchTest {
    private static final byte[] BODY = "{\"model\":\"m\",\"messages\":[]}".getBytes(StandardCharsets.UTF_8);
    private static final ChatRewrite GLOBAL =
            new ChatRewrite("be brief", GlobalPromptsConfig.MergeStrategy.PREPEND, "\n\n", false);
    private static final Selection PINNED = new Selection(
            new WorkerPin(new WorkerId("dynamo", 1), WorkerRole.AGGREGATED, 0, false), null,
            SelectionReason.ROUND_ROBIN_STALE, SelectionReason.NO_PREFILL_POOL, Selection.Dispatch.NONE);

    private final List<PickRequest> picked = new CopyOnWriteArrayList<>();
    private final AtomicBoolean recording = new AtomicBoolean(true);
    private final DynamoWorkerPicker picker = (snapshot, request) -> {
        if (recording.get()) {
            picked.add(request);
        }
        return PINNED;
    };
    private final DynamoSnapshot snapshot = new DynamoSnapshot(true, DiscoverySourceKind.FILE, List.of("dynamo"), 1,
            true, FleetView.of(List.of(), List.of()));
    /** One instance, as the config store hands out one per generation (the dispatcher caches by identity). */
    private final ShimConfig shimConfig =
            new ShimConfig(List.of("frontend", "frontend-2"), List.of(), Map.of("m", "worker-m"));
    private final ShimDispatcher dispatcher = ShimDispatcher.create(() -> snapshot, () -> shimConfig, picker,
            new SimpleMeterRegistry());

    private static DispatchRequest request(List<String> backends, ChatRewrites rewrites, boolean chatBody) {
        return new DispatchRequest("m", false, backends, Unpooled.wrappedBuffer(BODY), 7, rewrites, null, false,
                chatBody);
    }

    private static DispatchRequest request() {
        return request(List.of("frontend"), ChatRewrites.NONE, true);
    }

    private PickRequest last() {
        return picked.get(picked.size() - 1);
    }

    @Test
    void aFallbackIsPlannedAtOnceWithItsReasonForThePicker() {
        for (PromptFallback f : PromptFallback.values()) {
            dispatcher.use(picker, (request, model, replica) -> f);

            DispatchHook.Answer answer = dispatcher.plan(request());

            assertThat(answer).isInstanceOf(DispatchPlan.class);
            assertThat(last().prompt()).isNull();
            assertThat(last().kvFallback()).isEqualTo(f.selectionResult());
        }
        assertThat(PromptFallback.UNLABELLED.selectionResult()).isNull();
    }

    @Test
    void withoutAStageOrForAPassthroughTheStageIsNeverAsked() {
        AtomicInteger asked = new AtomicInteger();
        PromptStage counting = (request, model, replica) -> {
            asked.incrementAndGet();
            return PromptFallback.TOKENIZER_UNAVAILABLE;
        };
        dispatcher.use(picker, counting);
        assertThat(dispatcher.plan(request(List.of("frontend"), ChatRewrites.NONE, false)))
                .isInstanceOf(DispatchPlan.class);
        dispatcher.use(picker, null);
        assertThat(dispatcher.plan(request())).isInstanceOf(DispatchPlan.class);

        assertThat(asked).hasValue(0);
        assertThat(last().kvFallback()).isNull();
    }

    @Test
    void aPendingPromptIsPickedWhereItCompletesAndItsTokenDataIsPinnedOnlyWhenEveryReplicaGetsTheRenderedBody()
            throws Exception {
        byte[] tokenBody = "{\"nvext\":{\"token_data\":[1]}}".getBytes(StandardCharsets.UTF_8);
        PromptBlocks blocks = new PromptBlocks(40, List.of(new BlockHashes(16, new long[] {1, 2})), () -> tokenBody);
        AtomicReference<@Nullable ChatRewrite> rendered = new AtomicReference<>();
        AtomicReference<String> model = new AtomicReference<>();
        dispatcher.use(picker, (request, workerModel, replica) -> {
            rendered.set(replica.rewrite(request));
            model.set(workerModel);
            return new PromptStage.Pending(CompletableFuture.supplyAsync(() -> blocks));
        });

        // "other" is no shim replica; "frontend" is the first that is, and its replicas' rewrites differ.
        ChatRewrites differ = b -> b.equals("frontend") ? GLOBAL : ChatRewrite.NONE;
        DispatchPlan plan = later(request(List.of("other", "frontend", "frontend-2"), differ, true));

        assertThat(rendered.get()).isEqualTo(GLOBAL);
        assertThat(model.get()).isEqualTo("worker-m");
        assertThat(last().prompt()).isEqualTo(blocks);
        assertThat(last().model()).isEqualTo("worker-m");
        assertThat(plan.backends()).containsExactly("frontend", "frontend-2");
        assertThat(plan.pinnedBody()).isNull();

        DispatchPlan same = later(request(List.of("frontend", "frontend-2"), b -> GLOBAL, true));
        assertThat(same.pinnedBody()).isNotNull();
        assertThat(same.pinnedBody().bytes()).isEqualTo(tokenBody);
    }

    @Test
    void aPendingPromptThatFallsBackGivesThePickerItsReason() throws Exception {
        dispatcher.use(picker, (request, workerModel, replica) -> new PromptStage.Pending(
                CompletableFuture.supplyAsync(() -> PromptFallback.RENDER_UNAVAILABLE)));

        DispatchPlan plan = later(request());

        assertThat(plan.pinnedBody()).isNull();
        assertThat(last().prompt()).isNull();
        assertThat(last().kvFallback()).isEqualTo(KvSelectionResult.RENDER_UNAVAILABLE);
    }

    private DispatchPlan later(DispatchRequest request) throws Exception {
        DispatchHook.Answer answer = dispatcher.plan(request);
        assertThat(answer).isInstanceOf(DispatchHook.Later.class);
        DispatchPlan plan = ((DispatchHook.Later) answer).plan().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(plan).isNotNull();
        return plan;
    }

    @Test
    void aStageThatFallsBackCostsTheDispatchNoAllocation() {
        recording.set(false);
        DispatchRequest request = request();
        PromptStage fallingBack = (r, model, replica) -> PromptFallback.TOKENIZER_UNAVAILABLE;
        long loadOnly = Long.MAX_VALUE;
        long withStage = Long.MAX_VALUE;
        // Alternating rounds, the least of each: a round can catch the JIT compiling or a GC's bookkeeping.
        for (int round = 0; round < 4; round++) {
            dispatcher.use(picker, null);
            loadOnly = Math.min(loadOnly, bytesPerPlan(request));
            dispatcher.use(picker, fallingBack);
            withStage = Math.min(withStage, bytesPerPlan(request));
        }
        // Printed for the record (allocation figures hold on a loaded machine).
        System.out.printf("bytes per dispatch: load-only %d, stage falling back %d%n", loadOnly, withStage);
        assertThat(withStage).isLessThanOrEqualTo(loadOnly + 8);
    }

    private long bytesPerPlan(DispatchRequest request) {
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 10_000; i++) {
            end(dispatcher.plan(request));
        }
        int n = 5_000;
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < n; i++) {
            end(dispatcher.plan(request));
        }
        return (threads.getThreadAllocatedBytes(id) - before) / n;
    }

    private static void end(DispatchHook.@Nullable Answer answer) {
        if (answer instanceof DispatchPlan p) {
            p.listener().ended(DispatchPlan.Outcome.SERVED);
        }
    }
}
