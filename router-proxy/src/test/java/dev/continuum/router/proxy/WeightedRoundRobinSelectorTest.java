package dev.continuum.router.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.core.config.BackendConfig;
import dev.continuum.router.core.config.BackendRole;
import dev.continuum.router.core.config.BackendType;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WeightedRoundRobinSelectorTest {

    @SuppressWarnings("DataFlowIssue")
    private static Backend backend(int index, String name, int weight) {
        BackendConfig c = new BackendConfig(name, BackendType.OPENAI, URI.create("http://h"), List.of(),
                BackendRole.UNIFIED, weight, null, null, true, false);
        return new Backend(index, c, null); // the selector only reads index and weight
    }

    @Test
    void interleavesSmoothlyLikeNginx() {
        List<Backend> all = List.of(backend(0, "a", 5), backend(1, "b", 1), backend(2, "c", 1));
        WeightedRoundRobinSelector s = new WeightedRoundRobinSelector(3);
        StringBuilder seq = new StringBuilder();
        for (int i = 0; i < 7; i++) {
            seq.append(s.pick(all).name());
        }
        assertThat(seq.toString()).isEqualTo("aabacaa");
    }

    @Test
    void isExactOverEveryPeriodEvenUnderConcurrency() throws Exception {
        List<Backend> all = List.of(backend(0, "a", 7), backend(1, "b", 2), backend(2, "c", 1));
        WeightedRoundRobinSelector s = new WeightedRoundRobinSelector(3);
        Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        int threads = 4;
        int perThread = 2500; // 10,000 picks = 1,000 periods of 10
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    counts.computeIfAbsent(s.pick(all).name(), k -> new AtomicInteger()).incrementAndGet();
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        Map<String, Integer> plain = new HashMap<>();
        counts.forEach((k, v) -> plain.put(k, v.get()));
        assertThat(plain).containsEntry("a", 7000).containsEntry("b", 2000).containsEntry("c", 1000);
    }

    @Test
    void skipsNonCandidatesWithoutLosingTheirPlace() {
        Backend a = backend(0, "a", 1);
        Backend b = backend(1, "b", 1);
        WeightedRoundRobinSelector s = new WeightedRoundRobinSelector(2);
        assertThat(s.pick(List.of(b))).isSameAs(b);
        int aCount = 0;
        for (int i = 0; i < 10; i++) {
            if (s.pick(List.of(a, b)) == a) {
                aCount++;
            }
        }
        assertThat(aCount).isEqualTo(5);
    }
}
