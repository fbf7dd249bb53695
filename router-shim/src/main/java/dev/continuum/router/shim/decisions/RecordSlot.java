package dev.continuum.router.shim.decisions;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One decision record's fields, in place: the recorder fills a slot of the {@link DecisionRing} that it claimed
 * for the record's id ({@link #start}, {@link #prompt}, {@link #phase}, {@link #put}, {@link #quality}), and the
 * ring reuses the slot record after record (a record built elsewhere is drafted in a free-standing slot and
 * copied in). A kept record therefore costs its stores and no allocation once the slot has held a record that
 * large; a reader builds the immutable {@link DecisionRecord} when
 * it asks ({@link #toRecord}).
 *
 * <p><b>Readers never lock.</b> A ring slot carries a sequence word: odd while a writer copies into it, advanced
 * after. A reader reads the word, the fields, then the word again, and drops what it read when the two differ
 * (the slot was reused under it: the record it wanted left the ring). The observed time to first token is the
 * one field written after the record ({@link DecisionLog#firstBytes}); it is set once, by compare-and-set.
 */
public final class RecordSlot {
    private static final VarHandle VERSION;
    private static final VarHandle OBSERVED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            VERSION = lookup.findVarHandle(RecordSlot.class, "version", long.class);
            OBSERVED = lookup.findVarHandle(RecordSlot.class, "observedNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Even while the slot is readable, odd while a writer copies into it. */
    @SuppressWarnings("FieldMayBeFinal") // written through VERSION
    private volatile long version;
    @SuppressWarnings("FieldMayBeFinal") // written through OBSERVED
    private volatile long observedNanos = -1;

    long id = -1;
    long epochMillis;
    String model = "";
    String namespace = "";
    String result = "";
    @Nullable String fallback;
    String decodeReason = "";
    String prefillReason = "";
    long decodeWorker;
    int decodeRank;
    long prefillWorker;
    int prefillRank;
    long estimatedTokens;
    int promptTokens;
    long promptBlocks;
    long blockSize;
    int phases;
    final String[] kind = {"", ""};
    final int[] size = new int[2];
    final int[] omitted = new int[2];
    final int[] winner = new int[2];
    final double[] draw = new double[2];
    /** Both phases' candidates packed as {@link CandidateTerms} packs them, the first phase's first. */
    long[] longs = new long[0];
    double[] doubles = new double[0];
    int winnerOverlap;
    int bestOverlap;
    long avoidable;
    /** The TTFT prediction: {@link #ttftBasis} null when the record has none. */
    TtftModel.@Nullable Basis ttftBasis;
    long ttftWorker;
    int ttftRank;
    long ttftWork;
    long ttftPredicted;
    long ttftDispatch;
    int estimatedBytes;
    /** While claimed: the estimated bytes of the record this slot held before (0 for none). */
    int displaced;

    /** Starts a draft: the record's header (see {@link DecisionRecord} for each field). */
    public void start(long id, long epochMillis, String model, String namespace, String result,
            @Nullable String fallback, String decodeReason, String prefillReason, long decodeWorker, int decodeRank,
            long prefillWorker, int prefillRank) {
        this.id = id;
        this.epochMillis = epochMillis;
        this.model = model.length() > DecisionRecord.MAX_MODEL_CHARS
                ? model.substring(0, DecisionRecord.MAX_MODEL_CHARS) : model;
        this.namespace = namespace;
        this.result = result;
        this.fallback = fallback;
        this.decodeReason = decodeReason;
        this.prefillReason = prefillReason;
        this.decodeWorker = decodeWorker;
        this.decodeRank = decodeRank;
        this.prefillWorker = prefillWorker;
        this.prefillRank = prefillRank;
        phases = 0;
        ttftBasis = null;
        winnerOverlap = 0;
        bestOverlap = 0;
        avoidable = 0;
        estimatedBytes = DecisionRecord.BASE_BYTES;
    }

    /** The prompt's statistics ({@link DecisionRecord.PromptStats}; render and tokenize times are not reported yet). */
    public void prompt(long estimatedTokens, int promptTokens, long promptBlocks, long blockSize) {
        this.estimatedTokens = estimatedTokens;
        this.promptTokens = promptTokens;
        this.promptBlocks = promptBlocks;
        this.blockSize = blockSize;
    }

    /** Opens the next phase ({@link PhaseTerms}) of {@code candidates} candidates, filled next with {@link #put}. */
    public void phase(String kind, int candidates, int omitted, int winner, double draw) {
        int p = phases++;
        this.kind[p] = kind;
        this.size[p] = candidates;
        this.omitted[p] = omitted;
        this.winner[p] = winner;
        this.draw[p] = draw;
        room(first(phases));
        estimatedBytes += candidates * RankTerms.ESTIMATED_BYTES;
    }

    /** Fills candidate {@code j} of the phase opened last (see {@link CandidateTerms#put}). */
    public void put(int j, long workerId, int dpRank, long sampleBacklog, long ledgerTokens, long ledgerBlocks,
            long activeSequences, int overlapBlocks, long blockSize, double creditedPrefill, double adjustedPrefill,
            double decodeBlocks, int state, double cost, boolean eligible) {
        CandidateTerms.pack(longs, doubles, first(phases - 1) + j, workerId, dpRank, sampleBacklog, ledgerTokens,
                ledgerBlocks, activeSequences, overlapBlocks, blockSize, creditedPrefill, adjustedPrefill,
                decodeBlocks, state, cost, eligible);
    }

    /** The decision-quality figures ({@link DecisionRecord#winnerOverlap} and the next two). */
    public void quality(int winnerOverlap, int bestOverlap, long avoidable) {
        this.winnerOverlap = winnerOverlap;
        this.bestOverlap = bestOverlap;
        this.avoidable = avoidable;
    }

    /** The prediction {@link TtftModel#predictInto} made for the rank that prefills. */
    void ttft(long workerId, int dpRank, long work, long predicted, TtftModel.Basis basis, long dispatchNanos) {
        ttftWorker = workerId;
        ttftRank = dpRank;
        ttftWork = work;
        ttftPredicted = predicted;
        ttftBasis = basis;
        ttftDispatch = dispatchNanos;
    }

    /** The record's id (the draft's, or the ring slot's last). */
    public long id() {
        return id;
    }

    /** The first candidate of phase {@code p} (the candidates of every phase before it). */
    private int first(int p) {
        int at = 0;
        for (int i = 0; i < p; i++) {
            at += size[i];
        }
        return at;
    }

    /** Makes room for {@code candidates}: grows only past the most this slot held so far. */
    private void room(int candidates) {
        if (longs.length < candidates * CandidateTerms.LONGS) {
            long[] l = new long[candidates * CandidateTerms.LONGS];
            double[] d = new double[candidates * CandidateTerms.DOUBLES];
            System.arraycopy(longs, 0, l, 0, longs.length);
            System.arraycopy(doubles, 0, d, 0, doubles.length);
            longs = l;
            doubles = d;
        }
    }

    /** Claims this ring slot for a writer; false while another writer is copying into it. */
    boolean claim() {
        long v = version;
        return (v & 1) == 0 && VERSION.compareAndSet(this, v, v + 1);
    }

    /** Releases this claimed slot unchanged. */
    void release() {
        VERSION.setRelease(this, version - 1);
    }

    /** Copies draft {@code d} into this claimed slot ({@link #publish} then releases it to readers). */
    void copyFrom(RecordSlot d) {
        id = d.id;
        epochMillis = d.epochMillis;
        model = d.model;
        namespace = d.namespace;
        result = d.result;
        fallback = d.fallback;
        decodeReason = d.decodeReason;
        prefillReason = d.prefillReason;
        decodeWorker = d.decodeWorker;
        decodeRank = d.decodeRank;
        prefillWorker = d.prefillWorker;
        prefillRank = d.prefillRank;
        estimatedTokens = d.estimatedTokens;
        promptTokens = d.promptTokens;
        promptBlocks = d.promptBlocks;
        blockSize = d.blockSize;
        phases = d.phases;
        for (int p = 0; p < d.phases; p++) {
            kind[p] = d.kind[p];
            size[p] = d.size[p];
            omitted[p] = d.omitted[p];
            winner[p] = d.winner[p];
            draw[p] = d.draw[p];
        }
        int n = d.first(d.phases);
        room(n);
        System.arraycopy(d.longs, 0, longs, 0, n * CandidateTerms.LONGS);
        System.arraycopy(d.doubles, 0, doubles, 0, n * CandidateTerms.DOUBLES);
        winnerOverlap = d.winnerOverlap;
        bestOverlap = d.bestOverlap;
        avoidable = d.avoidable;
        ttftBasis = d.ttftBasis;
        ttftWorker = d.ttftWorker;
        ttftRank = d.ttftRank;
        ttftWork = d.ttftWork;
        ttftPredicted = d.ttftPredicted;
        ttftDispatch = d.ttftDispatch;
        estimatedBytes = d.estimatedBytes;
    }

    /** Releases this claimed slot, filled with its new record, to readers. */
    void publish() {
        OBSERVED.setOpaque(this, -1L);
        VERSION.setRelease(this, version + 1);
    }

    /** Marks this claimed slot empty (a fill that did not complete), to be published as such. */
    void forget() {
        id = -1;
        estimatedBytes = 0;
    }

    /** The slot's sequence word before a read (acquire): odd means a writer is inside. */
    long readBegin() {
        return (long) VERSION.getAcquire(this);
    }

    /** Whether what was read since {@link #readBegin} returned {@code v} is one record's. */
    boolean readValid(long v) {
        VarHandle.loadLoadFence();
        return (v & 1) == 0 && (long) VERSION.getOpaque(this) == v;
    }

    /** Sets the observed time to first token once; false when it was already set. */
    boolean observe(long nanos) {
        return OBSERVED.compareAndSet(this, -1L, Math.max(0, nanos));
    }

    /** Undoes {@link #observe} when the slot was reused meanwhile (the observation was for the record before). */
    void unobserve(long nanos) {
        OBSERVED.compareAndSet(this, Math.max(0, nanos), -1L);
    }

    /** The immutable record of what this slot holds (validate with {@link #readValid} before using it). */
    DecisionRecord toRecord() {
        int count = phases;
        PhaseTerms one = count > 0 ? phaseTerms(0) : null;
        PhaseTerms two = count > 1 ? phaseTerms(1) : null;
        List<PhaseTerms> terms = one == null ? List.of() : two == null ? List.of(one) : List.of(one, two);
        TtftModel.Basis basis = ttftBasis;
        TtftPrediction ttft = null;
        if (basis != null) {
            ttft = new TtftPrediction(ttftWorker, ttftRank, ttftWork, ttftPredicted, basis, ttftDispatch);
            long seen = observedNanos;
            if (seen >= 0) {
                ttft.observe(seen);
            }
        }
        return new DecisionRecord(id, epochMillis, model, namespace, result, fallback, decodeReason, prefillReason,
                decodeWorker, decodeRank, prefillWorker, prefillRank,
                new DecisionRecord.PromptStats(estimatedTokens, promptTokens, promptBlocks, blockSize, -1, -1),
                terms, winnerOverlap, bestOverlap, avoidable, ttft, estimatedBytes);
    }

    private PhaseTerms phaseTerms(int p) {
        // A reader may race a writer (its read is then dropped): every index is kept within the arrays it read.
        long[] l = longs;
        double[] d = doubles;
        int room = Math.min(l.length / CandidateTerms.LONGS, d.length / CandidateTerms.DOUBLES);
        int from = Math.min(Math.max(0, first(p)), room);
        int n = Math.min(Math.max(0, size[p]), room - from);
        return PhaseTerms.owning(kind[p], new CandidateTerms(l, d, from, n), omitted[p], winner[p], draw[p]);
    }

    /** Fills this draft from a record built elsewhere (tests and tools that add records by hand). */
    void set(DecisionRecord r) {
        start(r.id(), r.epochMillis(), r.model(), r.namespace(), r.result(), r.fallback(), r.decodeReason(),
                r.prefillReason(), r.decodeWorker(), r.decodeRank(), r.prefillWorker(), r.prefillRank());
        DecisionRecord.PromptStats s = r.prompt();
        prompt(s.estimatedTokens(), s.promptTokens(), s.promptBlocks(), s.blockSize());
        for (PhaseTerms p : r.phases().subList(0, Math.min(2, r.phases().size()))) {
            List<RankTerms> c = p.candidates();
            phase(p.phase(), c.size(), p.omitted(), p.winner(), p.temperatureDraw());
            for (int j = 0; j < c.size(); j++) {
                RankTerms t = c.get(j);
                put(j, t.workerId(), t.dpRank(), t.sampleBacklog(), t.ledgerTokens(), t.ledgerBlocks(),
                        t.activeSequences(), t.overlapBlocks(), t.blockSize(), t.creditedPrefill(),
                        t.adjustedPrefill(), t.decodeBlocks(), CandidateTerms.STATES.indexOf(t.state()), t.cost(),
                        t.eligible());
            }
        }
        quality(r.winnerOverlap(), r.bestOverlap(), r.avoidableTokens());
        TtftPrediction t = r.ttft();
        if (t != null) {
            ttft(t.workerId(), t.dpRank(), t.workTokens(), t.predictedNanos(), t.basis(), t.dispatchNanos());
        }
        estimatedBytes = r.estimatedBytes();
    }
}
