package dev.continuum.router.shim.decisions;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;

/**
 * A phase's candidates' terms packed in two primitive arrays, filled once while the record is built and never written
 * again: a record costs two arrays a phase instead of one object per candidate. {@link #get} builds the
 * {@link RankTerms} view of one candidate when a reader (the admin API, a test) asks for it.
 */
public final class CandidateTerms extends AbstractList<RankTerms> implements RandomAccess {
    /** The states a candidate can be in, by the index {@link #put} takes. */
    public static final List<String> STATES = List.of("fresh", "quiet", "silent", "stalled");
    private static final int LONGS = 8;
    private static final int DOUBLES = 4;

    private final long[] longs;
    private final double[] doubles;

    /** Room for {@code size} candidates; the builder fills every one with {@link #put} before handing it over. */
    public CandidateTerms(int size) {
        longs = new long[size * LONGS];
        doubles = new double[size * DOUBLES];
    }

    /**
     * Fills candidate {@code j} (see {@link RankTerms} for the terms); {@code state} indexes {@link #STATES}. Only
     * while the record is built: a {@link PhaseTerms} holding this list is immutable.
     */
    public void put(int j, long workerId, int dpRank, long sampleBacklog, long ledgerTokens, long ledgerBlocks,
            long activeSequences, int overlapBlocks, long blockSize, double creditedPrefill, double adjustedPrefill,
            double decodeBlocks, int state, double cost, boolean eligible) {
        int l = j * LONGS;
        longs[l] = workerId;
        longs[l + 1] = sampleBacklog;
        longs[l + 2] = ledgerTokens;
        longs[l + 3] = ledgerBlocks;
        longs[l + 4] = activeSequences;
        longs[l + 5] = blockSize;
        longs[l + 6] = (long) dpRank << 32 | (overlapBlocks & 0xFFFF_FFFFL);
        longs[l + 7] = (long) state << 1 | (eligible ? 1 : 0);
        int d = j * DOUBLES;
        doubles[d] = creditedPrefill;
        doubles[d + 1] = adjustedPrefill;
        doubles[d + 2] = decodeBlocks;
        doubles[d + 3] = cost;
    }

    @Override
    public RankTerms get(int j) {
        if (j < 0 || j >= size()) {
            throw new IndexOutOfBoundsException(j);
        }
        int l = j * LONGS;
        int d = j * DOUBLES;
        long pair = longs[l + 6];
        long flags = longs[l + 7];
        return new RankTerms(longs[l], (int) (pair >> 32), longs[l + 1], longs[l + 2], longs[l + 3], longs[l + 4],
                (int) pair, longs[l + 5], doubles[d], doubles[d + 1], doubles[d + 2], STATES.get((int) (flags >>> 1)),
                doubles[d + 3], (flags & 1) != 0);
    }

    @Override
    public int size() {
        return longs.length / LONGS;
    }
}
