package dev.continuum.router.shim.bench;

import dev.continuum.router.discovery.DiscoverySourceKind;
import dev.continuum.router.discovery.DynamoSnapshot;
import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.FleetView;
import dev.continuum.router.discovery.WorkerRole;
import dev.continuum.router.shim.DynamoWorkerPicker;
import dev.continuum.router.shim.PickRequest;
import dev.continuum.router.shim.PickerBenchAccess;
import dev.continuum.router.shim.Selection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A measured main, outside the test run (no {@code @Test}); see docs/benchmarks.md for the command.
 * Decision time of {@code LoadBasedPicker} for 8, 256 and 4,096 candidate ranks: half the fleet decode, half
 * prefill (one namespace, 8 dp ranks per worker), every rank with a fresh sample, so each pick scores every
 * decode rank and then every prefill rank. Each pick also records its unanswered dispatches; fresh samples for
 * every rank before each batch of 64 picks (not timed) keep the ledger answered, as live publishers would. Reports the median of 7 rounds.
 */
public final class PickerBenchmark {
    private PickerBenchmark() {
    }

    public static void main(String[] args) {
        int[] sizes = args.length == 0 ? new int[] {8, 256, 4096} : Arrays.stream(args).mapToInt(Integer::parseInt)
                .toArray();
        System.out.println("| candidate ranks (decode + prefill) | ns per pick (median of 7 rounds) | picks per round |");
        System.out.println("|---|---|---|");
        for (int ranks : sizes) {
            run(ranks);
        }
    }

    private static void run(int ranks) {
        int dp = Math.min(8, Math.max(1, ranks / 2));
        int workersPerRole = Math.max(1, ranks / 2 / dp);
        var load = PickerBenchAccess.load();
        List<DynamoWorker> workers = new ArrayList<>();
        for (int i = 0; i < workersPerRole; i++) {
            workers.add(PickerBenchAccess.worker("dynamo", 1000 + i, WorkerRole.DECODE, dp));
            workers.add(PickerBenchAccess.worker("dynamo", 900_000 + i, WorkerRole.PREFILL, dp));
        }
        DynamoSnapshot snapshot = new DynamoSnapshot(true, DiscoverySourceKind.ETCD, List.of("dynamo"), 1, true,
                FleetView.of(workers, List.of()));
        DynamoWorkerPicker picker = PickerBenchAccess.picker(load.store(), load.ticker());
        PickRequest request = new PickRequest(PickerBenchAccess.model(), Set.of("dynamo"), 700);
        int picks = Math.max(2_000, 4_000_000 / ranks);
        long sink = 0;
        long[] rounds = new long[7];
        for (int round = -3; round < rounds.length; round++) { // three warm-up rounds
            long elapsed = 0;
            for (int i = 0; i < picks; i += 64) {
                // Fresh samples for every rank, outside the timed part.
                load.advance(Duration.ofMillis(1));
                long v = i;
                for (DynamoWorker w : workers) {
                    for (int r = 0; r < dp; r++) {
                        load.sample(w.id(), r, (v + w.instanceId() + r) % 500, (v * 7 + r) % 4000);
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
        System.out.printf(Locale.ROOT, "| %d | %d | %d |%n", workersPerRole * dp * 2, rounds[3], picks);
        if (sink == 42) {
            System.out.println();
        }
    }
}
