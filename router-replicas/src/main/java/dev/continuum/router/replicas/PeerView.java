package dev.continuum.router.replicas;

/**
 * One followed peer as the admin view shows it.
 *
 * @param replica       its replica ID
 * @param epoch         its process start (a restart changes it)
 * @param lastSeq       the last batch applied (-1 while its snapshot is on its way)
 * @param synced        whether its part is applied (false while resynchronising)
 * @param sequences     its live sequences
 * @param prefillTokens the uncached prefill tokens they add, over all ranks
 * @param blocks        the blocks they add, over all ranks
 * @param heardMillis   milliseconds since it was last heard from
 */
public record PeerView(String replica, long epoch, long lastSeq, boolean synced, int sequences, long prefillTokens,
                       long blocks, long heardMillis) {
}
