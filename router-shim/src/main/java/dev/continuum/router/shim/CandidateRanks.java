package dev.continuum.router.shim;

import dev.continuum.router.discovery.DynamoWorker;
import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.load.LoadSample;
import dev.continuum.router.load.LoadStore;
import dev.continuum.router.load.RankSlot;
import dev.continuum.router.load.SampleKey;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The candidate ranks of one phase (decode or prefill) in one namespace for one model, as parallel arrays in
 * registry order (workers by instance ID, ranks ascending). Everything a pick needs per rank that does not
 * change between registry generations is here: the sample key, the rank's load-store slot (where its latest
 * sample is read without a lookup), the pin it returns, the rank's dispatch ledger and the phase's capacity.
 * Immutable after construction.
 */
final class CandidateRanks {
    /** Dynamo's default {@code kv_cache_block_size}: sizes the ledger entry of a card that omits it. */
    static final long DEFAULT_BLOCK_SIZE = 16;

    final int size;
    final SampleKey[] keys;
    /** Each rank's slot in the load store, taken when the index was built. */
    final RankSlot[] slots;
    final WorkerPin[] pins;
    final RankLedger[] ledgers;
    /** Each rank's active sequences (this router's dispatches from dispatch to first token and to the end). */
    final RankSequences[] sequences;
    /**
     * The phase's capacity ({@code total_kv_blocks} for decode, {@code max_num_batched_tokens} for prefill),
     * or NaN when the card lacks what the phase's cost needs: such a rank has no defined cost.
     */
    final double[] capacity;
    /** The card's {@code kv_cache_block_size} for the decode cost (meaningful only where capacity is defined). */
    final long[] costBlockSize;
    /** The block size a dispatch is recorded in: the card's, else {@link #DEFAULT_BLOCK_SIZE}. */
    final long[] ledgerBlockSize;
    /** For decode ranks: the prefill ranks of the same namespace and model, or null (prefill ranks: null). */
    final @Nullable CandidateRanks prefill;

    CandidateRanks(List<Rank> ranks, boolean decode, @Nullable CandidateRanks prefill) {
        this.size = ranks.size();
        this.keys = new SampleKey[size];
        this.slots = new RankSlot[size];
        this.pins = new WorkerPin[size];
        this.ledgers = new RankLedger[size];
        this.sequences = new RankSequences[size];
        this.capacity = new double[size];
        this.costBlockSize = new long[size];
        this.ledgerBlockSize = new long[size];
        this.prefill = prefill;
        for (int i = 0; i < size; i++) {
            Rank r = ranks.get(i);
            DynamoWorker w = r.worker;
            ModelCard card = w.card();
            keys[i] = r.key;
            slots[i] = r.slot;
            ledgers[i] = r.ledger;
            sequences[i] = r.sequences;
            pins[i] = new WorkerPin(w.id(), w.role(), r.key.dpRank(), card != null && card.dataParallelSize() != null);
            Integer bs = card == null ? null : card.kvCacheBlockSize();
            int blockSize = bs == null ? 0 : bs;
            boolean hasBlockSize = blockSize > 0;
            costBlockSize[i] = hasBlockSize ? blockSize : 0;
            ledgerBlockSize[i] = hasBlockSize ? blockSize : DEFAULT_BLOCK_SIZE;
            ModelCard.WorkerCapacity cap = w.capacity();
            Long c = decode ? cap.totalKvBlocks() : cap.maxNumBatchedTokens();
            long units = c == null ? 0 : c;
            boolean defined = units > 0 && (!decode || hasBlockSize);
            capacity[i] = defined ? units : Double.NaN;
        }
    }

    /** Copies rank {@code i}'s latest sample into {@code out}: from its slot, or by key once the slot is detached. */
    void read(int i, LoadStore store, RankSlot.Reading out) {
        if (!slots[i].read(out)) {
            out.set(store.latest(keys[i]));
        }
    }

    /** Rank {@code i}'s latest sample (the whole record), or null: from its slot, or by key once detached. */
    @Nullable LoadSample sample(int i, LoadStore store) {
        RankSlot slot = slots[i];
        LoadSample s = slot.sample();
        return s != null || !slot.detached() ? s : store.latest(keys[i]);
    }

    /** One rank while the index is built. */
    record Rank(DynamoWorker worker, SampleKey key, RankSlot slot, RankLedger ledger, RankSequences sequences) {
    }
}
