package dev.continuum.router.bench;

import dev.continuum.router.kv.index.IndexLimits;
import dev.continuum.router.kv.index.RadixIndex;
import java.lang.management.ManagementFactory;

/**
 * The KV index's heap at its ceilings, measured (docs/benchmarks.md, "KV index"): 1,048,576 nodes (4,096
 * chains of 256 blocks) held by 32 ranks of 262,144 blocks each, eight ranks on every node: 8,388,608
 * ownerships. A second index with the same nodes and one owner each separates the cost of a node from the
 * cost of an ownership. Run: {@code java -Xmx1g -cp router-bench/target/benchmarks.jar
 * dev.continuum.router.bench.KvIndexHeap}.
 */
public final class KvIndexHeap {
    private static final int CHAINS = 4096;
    private static final int LENGTH = 256;

    private KvIndexHeap() {
    }

    public static void main(String[] args) {
        long oneOwner = measure(1);
        long eightOwners = measure(8);
        long nodes = (long) CHAINS * LENGTH;
        double perOwnership = (eightOwners - oneOwner) / (7.0 * nodes);
        double perNode = oneOwner / (double) nodes - perOwnership;
        System.out.printf("index at 1,048,576 nodes, 1,048,576 ownerships: %.1f MiB%n", oneOwner / 1048576.0);
        System.out.printf("index at 1,048,576 nodes, 8,388,608 ownerships: %.1f MiB%n", eightOwners / 1048576.0);
        System.out.printf("per node: %.1f bytes, per ownership: %.1f bytes%n", perNode, perOwnership);
    }

    /** The heap an index with {@code owners} ranks on every node holds, after full collections. */
    private static long measure(int owners) {
        long base = used();
        RadixIndex index = build(owners);
        long held = used() - base;
        if (index.nodes() != CHAINS * LENGTH || index.ownerships() != owners * CHAINS * LENGTH) {
            throw new IllegalStateException(index.nodes() + " nodes, " + index.ownerships() + " ownerships");
        }
        return held;
    }

    /** 32 ranks; chain c is held by the {@code owners} ranks c % 4, c % 4 + 4, ... (each with its own hashes). */
    private static RadixIndex build(int owners) {
        RadixIndex index = new RadixIndex(IndexLimits.DEFAULT);
        int[] ranks = new int[32];
        for (int r = 0; r < ranks.length; r++) {
            ranks[r] = index.addRank(100 + r, 0);
        }
        long[] tokens = new long[LENGTH];
        long[] engine = new long[LENGTH];
        for (int c = 0; c < CHAINS; c++) {
            for (int i = 0; i < LENGTH; i++) {
                tokens[i] = KvTrace.mix((long) c * LENGTH + i + 1);
            }
            for (int k = 0; k < owners; k++) {
                int rank = c % 4 + 4 * k;
                for (int i = 0; i < LENGTH; i++) {
                    engine[i] = KvTrace.mix(((long) rank << 40) ^ ((long) c * LENGTH + i));
                }
                RadixIndex.StoreOutcome outcome = index.store(ranks[rank], false, 0, engine, tokens, 0, LENGTH);
                if (outcome != RadixIndex.StoreOutcome.STORED) {
                    throw new IllegalStateException("chain " + c + " rank " + rank + ": " + outcome);
                }
            }
        }
        return index;
    }

    private static long used() {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        var heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return heap.getUsed();
    }
}
