package dev.continuum.router.shim.decisions;

/**
 * {@code dynamo.decisions}: whether routed requests are recorded, the ring's two bounds, and how many candidates
 * besides the winner a phase keeps.
 *
 * @param enabled            record decisions (the header is sent only while on)
 * @param maxRecords         the ring's slots: the newest this many records are kept
 * @param maxBytes           the heap the full ring may hold; each record gets {@code maxBytes / maxRecords} and
 *                           keeps only as many candidates (the winner and the lowest costs first) as fit
 * @param candidatesPerPhase the cheapest eligible candidates besides the winner each phase keeps (0 .. 64)
 */
public record DecisionSettings(boolean enabled, int maxRecords, long maxBytes, int candidatesPerPhase) {
    public static final int MIN_RECORDS = 16;
    public static final int MAX_RECORDS = 1 << 20;
    public static final long MIN_BYTES = 64L * 1024;
    public static final long MAX_BYTES = 1L << 30;
    public static final int DEFAULT_CANDIDATES = 8;
    public static final int MAX_CANDIDATES = 64;
    /**
     * 2048 records in 8 MiB: 4 KiB a record, more than the 2,912 bytes a two-phase record weighs at 8 candidates
     * a phase, so at the defaults the ring holds at most about 5.7 MiB, and a full ring at benchmark rates keeps
     * little for the collector to copy.
     */
    public static final DecisionSettings DEFAULTS = new DecisionSettings(true, 2048, 8L * 1024 * 1024,
            DEFAULT_CANDIDATES);

    public DecisionSettings {
        if (maxRecords < MIN_RECORDS || maxRecords > MAX_RECORDS) {
            throw new IllegalArgumentException("maxRecords: " + maxRecords);
        }
        if (maxBytes < MIN_BYTES || maxBytes > MAX_BYTES) {
            throw new IllegalArgumentException("maxBytes: " + maxBytes);
        }
        if (candidatesPerPhase < 0 || candidatesPerPhase > MAX_CANDIDATES) {
            throw new IllegalArgumentException("candidatesPerPhase: " + candidatesPerPhase);
        }
    }

    /** With the default {@link #DEFAULT_CANDIDATES} candidates a phase. */
    public DecisionSettings(boolean enabled, int maxRecords, long maxBytes) {
        this(enabled, maxRecords, maxBytes, DEFAULT_CANDIDATES);
    }

    /** The bytes one record may weigh. */
    public long bytesPerRecord() {
        return maxBytes / maxRecords;
    }

    /** How many candidates one record's byte share has room for across its phases (at least the two winners). */
    public int candidatesPerRecord() {
        long room = (bytesPerRecord() - DecisionRecord.BASE_BYTES) / RankTerms.ESTIMATED_BYTES;
        return (int) Math.max(2, Math.min(Integer.MAX_VALUE, room));
    }
}
