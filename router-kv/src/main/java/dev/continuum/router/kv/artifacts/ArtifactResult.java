package dev.continuum.router.kv.artifacts;

/** The closed label set of {@code continuum_dynamo_kv_artifacts_total{result}}. */
public enum ArtifactResult {
    /** Fetched (or read from its local path), verified and written to the cache. */
    LOADED("loaded"),
    /** Found in the cache and verified. */
    CACHED("cached"),
    /** Its checksum is not in {@code dynamo.kv.pinned_artifacts}: not fetched, cached or used. */
    UNPINNED("unpinned"),
    /** Its scheme is off ({@code allow_http_artifacts}, {@code allow_hf_artifacts}) or unknown. */
    DISALLOWED("disallowed"),
    /** Over the size cap, by its declared size, its Content-Length or the bytes read. */
    TOO_LARGE("too_large"),
    /** The bytes do not hash to the pinned checksum. */
    CHECKSUM_MISMATCH("checksum_mismatch"),
    /** Reading or fetching failed (I/O, HTTP status, too many redirects); retried after the retry delay. */
    FETCH_FAILED("fetch_failed"),
    /** A cached blob no longer hashed to its name (modified on disk) and was deleted. */
    EVICTED("evicted"),
    /** Something the pipeline cannot use: a block size outside 16..65536, a third block size, a tiktoken model. */
    UNSUPPORTED("unsupported");

    private final String label;

    ArtifactResult(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
