package dev.continuum.router.proxy;

/**
 * Bounds on what the proxy accepts from upstreams (which are trusted to speak HTTP, not to be
 * small).
 *
 * @param maxResponseInitialLineLength status line bytes
 * @param maxResponseHeaderSize        response header bytes
 * @param maxChunkSize                 largest content piece the decoder hands on (larger bodies arrive in pieces)
 * @param maxProbeBodyBytes            largest health-probe answer read (the {@code /v1/models} list)
 * @param maxReportedModels            most model ids taken from one probe answer
 */
public record UpstreamLimits(int maxResponseInitialLineLength, int maxResponseHeaderSize, int maxChunkSize,
                             int maxProbeBodyBytes, int maxReportedModels) {
    public static final UpstreamLimits DEFAULT = new UpstreamLimits(8 * 1024, 64 * 1024, 64 * 1024,
            4 * 1024 * 1024, 10_000);

    public UpstreamLimits {
        if (maxResponseInitialLineLength < 64 || maxResponseHeaderSize < 256 || maxChunkSize < 256
                || maxProbeBodyBytes < 1024 || maxReportedModels < 1) {
            throw new IllegalArgumentException("upstream limits: " + maxResponseInitialLineLength + "/"
                    + maxResponseHeaderSize + "/" + maxChunkSize + "/" + maxProbeBodyBytes + "/" + maxReportedModels
                    + " (expected: >= 64/256/256/1024/1)");
        }
    }
}
