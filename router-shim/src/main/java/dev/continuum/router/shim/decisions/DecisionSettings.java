package dev.continuum.router.shim.decisions;

/**
 * {@code dynamo.decisions}: whether routed requests are recorded, and the ring's two bounds.
 *
 * @param enabled    record decisions (the header is sent only while on)
 * @param maxRecords the ring's slots: the newest this many records are kept
 * @param maxBytes   the heap the full ring may hold; each record gets {@code maxBytes / maxRecords} and keeps only
 *                   as many candidates (the winner and the lowest costs first) as fit
 */
public record DecisionSettings(boolean enabled, int maxRecords, long maxBytes) {
    public static final int MIN_RECORDS = 16;
    public static final int MAX_RECORDS = 1 << 20;
    public static final long MIN_BYTES = 64L * 1024;
    public static final long MAX_BYTES = 1L << 30;
    public static final DecisionSettings DEFAULTS = new DecisionSettings(true, 4096, 64L * 1024 * 1024);

    public DecisionSettings {
        if (maxRecords < MIN_RECORDS || maxRecords > MAX_RECORDS) {
            throw new IllegalArgumentException("maxRecords: " + maxRecords);
        }
        if (maxBytes < MIN_BYTES || maxBytes > MAX_BYTES) {
            throw new IllegalArgumentException("maxBytes: " + maxBytes);
        }
    }

    /** The bytes one record may weigh. */
    public long bytesPerRecord() {
        return maxBytes / maxRecords;
    }

    /** How many candidates one record keeps across its phases (at least the two winners). */
    public int candidatesPerRecord() {
        long room = (bytesPerRecord() - DecisionRecord.BASE_BYTES) / RankTerms.ESTIMATED_BYTES;
        return (int) Math.max(2, Math.min(Integer.MAX_VALUE, room));
    }
}
