package dev.continuum.router.shim;

import dev.continuum.router.load.SampleKey;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A dispatched request as {@link SequenceListener#dispatched} sees it.
 *
 * @param id             this router's number for the sequence (the later calls name it), unique per tracker
 * @param decode         the decode (or aggregated) rank
 * @param prefill        the prefill rank of a disaggregated pair, or null (the decode rank prefills)
 * @param prefillTokens  uncached prompt tokens the prefilling rank computes (counted until the first token)
 * @param blocks         the request's prompt blocks on the decode rank (counted until the end)
 * @param decodeHashes   the prompt's block hashes in the decode rank's block size, or null when unknown
 * @param prefillHashes  the same for the prefill rank, or null (no pair, or unknown)
 */
public record DispatchedSequence(long id, SampleKey decode, @Nullable SampleKey prefill, long prefillTokens,
                                 long blocks, @Nullable BlockHashes decodeHashes,
                                 @Nullable BlockHashes prefillHashes) {
    public DispatchedSequence {
        Objects.requireNonNull(decode, "decode");
    }
}
