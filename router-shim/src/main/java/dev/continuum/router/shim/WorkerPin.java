package dev.continuum.router.shim;

import dev.continuum.router.discovery.WorkerId;
import dev.continuum.router.discovery.WorkerRole;
import java.util.Objects;

/**
 * One pinned (worker, dp_rank), with its header values spelled once (pins are built with the candidate index,
 * not per request).
 *
 * @param worker       namespace and instance ID (sent in decimal)
 * @param role         the worker's role ({@code decode} or {@code aggregated} for the decode pin,
 *                     {@code prefill} for the prefill pin)
 * @param dpRank       the chosen data-parallel rank
 * @param rankDeclared whether the card declares {@code data_parallel_size} (any value, including 1): only then
 *                     is the rank header sent, including rank 0
 * @param decimal      the instance ID in unsigned decimal ({@link WorkerId#decimal()})
 * @param rankDecimal  the rank in decimal
 */
public record WorkerPin(WorkerId worker, WorkerRole role, long dpRank, boolean rankDeclared, String decimal,
                        String rankDecimal) {
    public WorkerPin(WorkerId worker, WorkerRole role, long dpRank, boolean rankDeclared) {
        this(worker, role, dpRank, rankDeclared, worker.decimal(), Long.toString(dpRank));
    }

    public WorkerPin {
        Objects.requireNonNull(worker, "worker");
        Objects.requireNonNull(role, "role");
        if (dpRank < 0 || dpRank > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("dpRank: " + dpRank + " (expected: an unsigned 32-bit value)");
        }
        if (!worker.decimal().equals(decimal) || !Long.toString(dpRank).equals(rankDecimal)) {
            throw new IllegalArgumentException("decimal, rankDecimal: " + decimal + ", " + rankDecimal
                    + " (expected: " + worker.decimal() + ", " + dpRank + ")");
        }
    }
}
