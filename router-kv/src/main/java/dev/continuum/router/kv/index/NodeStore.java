package dev.continuum.router.kv.index;

import java.util.Arrays;

/**
 * {@link RadixIndex}'s nodes, by int id (0 = the root), in parallel primitive arrays: path key, parent, child
 * count and owners. A node's owners are a sorted {@code long[]} of {@code rank id << 32 | reference count} (how
 * many of the rank's engine {@code block_hash}es name the node). Freed ids, with their owner arrays, are reused,
 * so a steady stream of stores and removals allocates nothing.
 *
 * <p>The writer mutates the store; readers read {@link #ownerCounts()} and {@link #ownerLists()} once per walk
 * (growing replaces the arrays) and range-check what they read in them.
 */
final class NodeStore {
    static final int ROOT = 0;
    /** {@link #addOwner}: the node already had {@code maxOwners} owners. */
    static final int FULL = -1;
    /** {@link #addOwner}: one more reference of an owner the node had. */
    static final int REFERENCED = 0;
    /** {@link #addOwner}: the rank became a new owner. */
    static final int ADDED = 1;

    private final int maxNodes;
    private final int maxOwners;
    // Reader-visible.
    /** Each node's path key: {@link ChildTable#step} folded from the root's seed over its prefix's tokens_hash. */
    private long[] path;
    private int[] parent;
    private int[] ownerCount;
    private long[][] owners;
    // Writer-only.
    private int[] childCount;
    private int[] free;
    private int freeTop;
    private int next = 1;
    private int live;

    NodeStore(int capacity, long rootPath, IndexLimits limits) {
        maxNodes = limits.maxNodes();
        maxOwners = limits.maxOwnersPerNode();
        path = new long[capacity];
        parent = new int[capacity];
        ownerCount = new int[capacity];
        owners = new long[capacity][];
        childCount = new int[capacity];
        free = new int[64];
        parent[ROOT] = -1;
        path[ROOT] = rootPath;
    }

    /** Owners per node id, for a reader to read once per walk. */
    int[] ownerCounts() {
        return ownerCount;
    }

    /** Sorted owner arrays per node id (null until a node first had an owner), for a reader to read once. */
    long[][] ownerLists() {
        return owners;
    }

    // Writer side only below.

    /** Live nodes, the root not counted. */
    int live() {
        return live;
    }

    long path(int node) {
        return path[node];
    }

    int parent(int node) {
        return parent[node];
    }

    /** A node with neither owners nor children (never the root). */
    boolean unused(int node) {
        return node != ROOT && ownerCount[node] == 0 && childCount[node] == 0;
    }

    /** A new node, with no owners, under {@code parentId} at path key {@code key}. */
    int allocate(int parentId, long key) {
        int id;
        if (freeTop > 0) {
            id = free[--freeTop];
        } else {
            id = next++;
            if (id == path.length) {
                int n = (int) Math.min(id * 2L, maxNodes + 1L); // ids never pass the ceiling
                path = Arrays.copyOf(path, n);
                parent = Arrays.copyOf(parent, n);
                ownerCount = Arrays.copyOf(ownerCount, n);
                owners = Arrays.copyOf(owners, n);
                childCount = Arrays.copyOf(childCount, n);
            }
        }
        path[id] = key;
        parent[id] = parentId;
        ownerCount[id] = 0;
        childCount[id] = 0;
        childCount[parentId]++;
        live++;
        return id;
    }

    /** Frees unused {@code node} (its owner array is kept for the id's next use). */
    void release(int node) {
        childCount[parent[node]]--;
        parent[node] = -1;
        if (freeTop == free.length) {
            free = Arrays.copyOf(free, free.length * 2);
        }
        free[freeTop++] = node;
        live--;
    }

    /** Adds one reference of {@code rank} to {@code node}: {@link #ADDED}, {@link #REFERENCED} or {@link #FULL}. */
    int addOwner(int node, int rank) {
        long[] list = owners[node];
        int n = ownerCount[node];
        int at = search(list, n, rank);
        if (at >= 0) {
            list[at]++; // a found owner means the list is there
            return REFERENCED;
        }
        if (n >= maxOwners) {
            return FULL;
        }
        int insert = -at - 1;
        if (list == null || n == list.length) {
            long[] grown = new long[list == null ? 2 : Math.min(list.length * 2, maxOwners)];
            if (list != null) {
                System.arraycopy(list, 0, grown, 0, n);
            }
            owners[node] = grown;
            list = grown;
        }
        System.arraycopy(list, insert, list, insert + 1, n - insert);
        list[insert] = ((long) rank << 32) | 1;
        ownerCount[node] = n + 1;
        return ADDED;
    }

    /**
     * Drops one reference of {@code rank} from {@code node}: true when that was its last, so the rank no longer
     * owns the node; false when it still does or never did.
     */
    boolean dropOwner(int node, int rank) {
        long[] list = owners[node];
        int n = ownerCount[node];
        int at = search(list, n, rank);
        if (at < 0) {
            return false;
        }
        if ((int) list[at] > 1) {
            list[at]--;
            return false;
        }
        System.arraycopy(list, at + 1, list, at, n - at - 1);
        ownerCount[node] = n - 1;
        return true;
    }

    /** The largest rank id owning {@code node}, or -1 when none does. */
    int largestOwner(int node) {
        int n = ownerCount[node];
        long[] list = owners[node];
        return n == 0 || list == null ? -1 : (int) (list[n - 1] >>> 32);
    }

    /** The owner's index in the sorted list, or {@code -(insertion point) - 1}. */
    private static int search(long[] list, int n, int rank) {
        int lo = 0;
        int hi = n - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int r = (int) (list[mid] >>> 32);
            if (r < rank) {
                lo = mid + 1;
            } else if (r > rank) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -(lo + 1);
    }
}
