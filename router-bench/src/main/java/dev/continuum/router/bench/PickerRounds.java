package dev.continuum.router.bench;

import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.Selection;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A measured program of the benchmarks jar (a main, not JMH); see docs/benchmarks.md for the command. The
 * hand-written cross-check of {@link PickerBenchmark}: decision time of {@code LoadBasedPicker} for 8, 256 and
 * 4,096 candidate ranks on the same fleet ({@link Fleets#disaggregated}: half decode, half prefill, one
 * namespace, 8 dp ranks per worker), every rank with a fresh sample, so each pick scores every decode rank and
 * then every prefill rank. Each pick also records its unanswered dispatches; fresh samples for every rank
 * before each batch of 64 picks (not timed), received through the real kv_metrics subscription into the real
 * store ({@link KvMetricsFeed}), keep the ledger answered, as live publishers would. Reports the median of 7
 * rounds after 3 warm-up rounds.
 */
public final class PickerRounds {
    private PickerRounds() {
    }

    public static void main(String[] args) throws Exception {
        int[] sizes = args.length == 0 ? new int[] {8, 256, 4096} : Arrays.stream(args).mapToInt(Integer::parseInt)
                .toArray();
        System.out.println("| candidate ranks (decode + prefill) | ns per pick (median of 7 rounds) | picks per round |");
        System.out.println("|---|---|---|");
        for (int ranks : sizes) {
            run(ranks);
        }
    }

    private static void run(int ranks) throws Exception {
        List<DynamoWorker> workers = Fleets.disaggregated(ranks);
        int dp = Fleets.dpSize(ranks);
        Set<WorkerId> live = new HashSet<>();
        workers.forEach(w -> live.add(w.id()));
        long[] clock = {Duration.ofSeconds(10).toNanos()};
        try (KvMetricsFeed feed = new KvMetricsFeed(live, () -> clock[0])) {
            DynamoSnapshot snapshot = Fleets.snapshot(workers);
            DynamoWorkerPicker picker = DynamoWorkerPicker.loadBased(feed.store(), () -> clock[0],
                    new SimpleMeterRegistry());
            PickRequest request = new PickRequest(ChatBodies.MODEL, Set.of(Fleets.NS), 700);
            int picks = Math.max(2_000, 4_000_000 / ranks);
            long sink = 0;
            long[] rounds = new long[7];
            for (int round = -3; round < rounds.length; round++) { // three warm-up rounds
                long elapsed = 0;
                for (int i = 0; i < picks; i += 64) {
                    // Fresh samples for every rank, outside the timed part.
                    clock[0] += Duration.ofMillis(1).toNanos();
                    long v = i;
                    for (DynamoWorker w : workers) {
                        for (int r = 0; r < dp; r++) {
                            feed.publish(w.instanceId(), r, (v + w.instanceId() + r) % 500, (v * 7 + r) % 4000);
                        }
                    }
                    long start = System.nanoTime();
                    for (int j = 0; j < 64; j++) {
                        Selection s = picker.pick(snapshot, request);
                        sink += s == null ? 0 : s.decode().dpRank();
                    }
                    elapsed += System.nanoTime() - start;
                }
                if (round >= 0) {
                    rounds[round] = elapsed / picks;
                }
            }
            Arrays.sort(rounds);
            System.out.printf(Locale.ROOT, "| %d | %d | %d |%n", workers.size() * dp, rounds[3], picks);
            if (sink == 42) {
                System.out.println();
            }
        }
    }
}
