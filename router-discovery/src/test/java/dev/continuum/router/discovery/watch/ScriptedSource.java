package dev.continuum.router.discovery.watch;

import dev.continuum.router.discovery.reducer.DiscoveryEvent;
import dev.continuum.router.discovery.source.WatchSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;

/**
 * A source driven by the test: each {@link #open} takes the next scripted step (a seed, or a failure); the
 * test then opens the watches, emits events and ends the pass by hand.
 */
final class ScriptedSource implements WatchSource {
    private final BlockingQueue<Supplier<Object>> steps = new LinkedBlockingQueue<>();
    final List<ScriptedPass> passes = new CopyOnWriteArrayList<>();
    volatile int opens;

    /** The next open reads {@code seed}. */
    ScriptedSource thenSeed(List<DiscoveryEvent.Put> seed) {
        steps.add(() -> new ScriptedPass(seed));
        return this;
    }

    /** The next open fails. */
    ScriptedSource thenFail(String message) {
        steps.add(() -> new IllegalStateException(message));
        return this;
    }

    @Override
    public Pass open(Duration seedTimeout) throws Exception {
        opens++;
        // Blocks like a dial to an unreachable server until the test scripts a step (or the watcher is stopped).
        Supplier<Object> step = steps.poll(seedTimeout.toMillis(), TimeUnit.MILLISECONDS);
        if (step == null) {
            throw new java.util.concurrent.TimeoutException("seed timeout");
        }
        Object outcome = step.get();
        if (outcome instanceof Exception e) {
            throw e;
        }
        ScriptedPass pass = (ScriptedPass) outcome;
        passes.add(pass);
        return pass;
    }

    @Override
    public String describe() {
        return "scripted source";
    }

    /** The pass opened most recently, once it is following. */
    ScriptedPass awaitPass(int number) {
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> passes.size() >= number && passes.get(number - 1).listener != null);
        return passes.get(number - 1);
    }

    static final class ScriptedPass implements Pass {
        private final List<DiscoveryEvent.Put> seed;
        /** What the scripted store holds now (the pass's first listing plus every emitted change), for rereads. */
        private final Map<String, byte[]> current = new ConcurrentHashMap<>();
        final List<List<String>> rereads = new CopyOnWriteArrayList<>();
        volatile @Nullable PassListener listener;
        volatile boolean closed;

        ScriptedPass(List<DiscoveryEvent.Put> seed) {
            this.seed = new ArrayList<>(seed);
            seed.forEach(put -> current.put(put.key(), put.value()));
        }

        @Override
        public List<DiscoveryEvent> reread(List<String> keys) {
            rereads.add(List.copyOf(keys));
            List<DiscoveryEvent> answer = new ArrayList<>();
            for (String key : keys) {
                byte[] value = current.get(key);
                answer.add(value == null ? new DiscoveryEvent.Delete(key) : new DiscoveryEvent.Put(key, value));
            }
            return answer;
        }

        private void track(List<DiscoveryEvent> events) {
            for (DiscoveryEvent event : events) {
                if (event instanceof DiscoveryEvent.Put put) {
                    current.put(put.key(), put.value());
                } else if (event instanceof DiscoveryEvent.Delete delete) {
                    current.remove(delete.key());
                } else if (event instanceof DiscoveryEvent.Resync resync) {
                    current.clear();
                    resync.records().forEach(put -> current.put(put.key(), put.value()));
                }
            }
        }

        @Override
        public List<DiscoveryEvent.Put> seed() {
            return seed;
        }

        @Override
        public void follow(PassListener listener) {
            this.listener = listener;
        }

        void open() {
            listener.opened();
        }

        void emit(DiscoveryEvent... events) {
            emit(List.of(events));
        }

        void emit(List<DiscoveryEvent> events) {
            track(events);
            listener.events(events);
        }

        void end(String reason) {
            listener.ended(reason, null);
        }

        @Override
        public void close() {
            closed = true;
        }
    }
}
