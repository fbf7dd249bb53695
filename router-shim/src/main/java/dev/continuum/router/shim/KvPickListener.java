package dev.continuum.router.shim;

/**
 * What the KV-aware picker tells the router's own cache prediction (docs/kv-routing.md, "Predicted cache and
 * approximate mode"): after each KV-scored pick, the rank that will prefill the request and the request's block
 * hashes at that rank's block size; and, per namespace, whether the router predicts that namespace's caches from
 * its own picks alone (approximate mode), so the picker scores it with the KV formula although no kv-events
 * publisher feeds it.
 *
 * <p>Contract: both methods run on the picking thread (an event loop or the encoder's completion thread) for
 * every KV-scored request, so they never block, take no lock a slow path holds, and allocate nothing at steady
 * state. {@link #picked} must not keep {@code hashes} beyond the call (the array belongs to the request).
 */
public interface KvPickListener {
    /** No prediction: the picker behaves as before this seam (kv-events alone feed the index). */
    KvPickListener NONE = new KvPickListener() {
        @Override
        public boolean approximate(String namespace, boolean kvEventsPublished) {
            return false;
        }

        @Override
        public void picked(WorkerPin rank, BlockHashes hashes) {
        }
    };

    /**
     * Whether {@code namespace} runs in approximate mode: the router's own picks feed its KV index, so its requests
     * are scored with the KV formula even when {@code kvEventsPublished} is false.
     */
    boolean approximate(String namespace, boolean kvEventsPublished);

    /** A KV-scored pick: {@code rank} will prefill a prompt whose blocks at its block size are {@code hashes}. */
    void picked(WorkerPin rank, BlockHashes hashes);
}
