package dev.continuum.router.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@link PromptEncodeBenchmark}'s cases measured in process CPU time per operation, alternated in blocks within one
 * JVM: on a machine loaded by other work, wall time mostly measures the wait for a core, CPU time what the
 * operation itself costs (the pool's worker included; the JIT and GC threads too, which is noise both sides
 * share). Usage: {@code java -cp benchmarks.jar dev.continuum.router.bench.PromptCpuProbe [turns] [rounds] [ops]}.
 * Prints, per case, the median over rounds of CPU ms per op, and per round the ratio of each case to the first.
 */
public final class PromptCpuProbe {
    private PromptCpuProbe() {
    }

    public static void main(String[] args) throws Exception {
        int turns = args.length > 0 ? Integer.parseInt(args[0]) : 35;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 6;
        int ops = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        PromptEncodeBenchmark b = new PromptEncodeBenchmark();
        b.turns = turns;
        b.setup();
        Map<String, Supplier<Object>> cases = new LinkedHashMap<>();
        cases.put("coldAndHashCacheOff", b::coldAndHashCacheOff);
        cases.put("coldAndHash", b::coldAndHash);
        cases.put("idsOnlyEncode", b::idsOnlyEncode);
        cases.put("seenTurnsAndHash", b::seenTurnsAndHash);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long sink = 0;
        for (Supplier<Object> c : cases.values()) { // warm-up
            for (int i = 0; i < 3 * ops; i++) {
                sink += c.get().hashCode();
            }
        }
        Map<String, List<Double>> cpu = new LinkedHashMap<>();
        cases.keySet().forEach(k -> cpu.put(k, new ArrayList<>()));
        for (int r = 0; r < rounds; r++) {
            StringBuilder line = new StringBuilder("round " + (r + 1) + ":");
            double first = 0;
            for (Map.Entry<String, Supplier<Object>> c : cases.entrySet()) {
                int n = c.getKey().startsWith("seen") ? ops * 20 : ops;
                long t0 = os.getProcessCpuTime();
                for (int i = 0; i < n; i++) {
                    sink += c.getValue().get().hashCode();
                }
                double msPerOp = (os.getProcessCpuTime() - t0) / 1e6 / n;
                cpu.computeIfAbsent(c.getKey(), k -> new ArrayList<>()).add(msPerOp);
                if (first == 0) {
                    first = msPerOp;
                }
                line.append(String.format(" %s %.2f ms (%.2f x)", c.getKey(), msPerOp, msPerOp / first));
            }
            System.out.println(line);
        }
        for (Map.Entry<String, List<Double>> e : cpu.entrySet()) {
            double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
            System.out.printf("median %s: %.3f ms CPU/op (min %.3f, max %.3f)%n", e.getKey(), v[v.length / 2], v[0],
                    v[v.length - 1]);
        }
        b.tearDown();
        System.out.println(sink == 42 ? "" : "done");
    }
}
