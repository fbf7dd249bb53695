package dev.continuum.router.shim;

import dev.continuum.router.load.LoadStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.LongSupplier;

/** Lets the benchmark main build a picker and a scripted load store from outside the package. */
public final class PickerBenchAccess {
    private PickerBenchAccess() {
    }

    public static DynamoWorkerPicker picker(LoadStore store, LongSupplier ticker) {
        return DynamoWorkerPicker.loadBased(store, ticker, new SimpleMeterRegistry());
    }

    public static ScriptedLoadHandle load() {
        return new ScriptedLoadHandle(new ScriptedLoad());
    }

    /** The scripted store and its ticker. */
    public record ScriptedLoadHandle(ScriptedLoad load) {
        public LoadStore store() {
            return load;
        }

        public LongSupplier ticker() {
            return load;
        }

        public void sample(dev.continuum.router.discovery.WorkerId worker, long rank, long decodeBlocks,
                long prefillTokens) {
            load.sample(worker, rank, decodeBlocks, prefillTokens);
        }

        public void advance(java.time.Duration d) {
            load.advance(d);
        }
    }

    public static dev.continuum.router.discovery.DynamoWorker worker(String ns, long id,
            dev.continuum.router.discovery.WorkerRole role, int dpSize) {
        return ShimFleets.worker(ns, id, role, ShimFleets.MODEL, 0, dpSize);
    }

    public static String model() {
        return ShimFleets.MODEL;
    }
}
