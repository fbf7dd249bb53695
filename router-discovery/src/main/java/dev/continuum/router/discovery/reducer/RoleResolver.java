package dev.continuum.router.discovery.reducer;

import dev.continuum.router.discovery.ModelCard;
import dev.continuum.router.discovery.WorkerRole;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Decides a worker's role from its component name and its card. A claim comes from the component
 * ({@code prefill}, {@code decode}), from the card's {@code worker_type} ({@code Prefill}, {@code Decode},
 * {@code Aggregated}, any case) or from {@code model_type} carrying {@code Prefill}. Disagreeing claims
 * exclude the worker; an unrecognized {@code worker_type} is no claim (the component decides, else the
 * worker is {@code unknown}); no claim at all means an aggregated worker.
 */
final class RoleResolver {
    private RoleResolver() {
    }

    /** The role, or the two disagreeing claims. */
    sealed interface Resolution {
    }

    record Resolved(WorkerRole role) implements Resolution {
    }

    record Conflict(WorkerRole componentClaim, WorkerRole cardClaim) implements Resolution {
    }

    static Resolution resolve(String component, @Nullable ModelCard card) {
        WorkerRole fromComponent = componentClaim(component);
        WorkerRole fromCard = null;
        boolean unrecognizedWorkerType = false;
        if (card != null) {
            String workerType = card.workerType();
            if (workerType != null && !workerType.isEmpty()) {
                fromCard = workerTypeClaim(workerType);
                unrecognizedWorkerType = fromCard == null;
            }
            if (fromCard == null && card.prefillFlag()) {
                fromCard = WorkerRole.PREFILL;
                unrecognizedWorkerType = false;
            }
        }
        if (fromComponent != null && fromCard != null && fromComponent != fromCard) {
            return new Conflict(fromComponent, fromCard);
        }
        if (fromComponent != null) {
            return new Resolved(fromComponent);
        }
        if (fromCard != null) {
            return new Resolved(fromCard);
        }
        return new Resolved(unrecognizedWorkerType ? WorkerRole.UNKNOWN : WorkerRole.AGGREGATED);
    }

    private static @Nullable WorkerRole componentClaim(String component) {
        return switch (component.toLowerCase(Locale.ROOT)) {
            case "prefill" -> WorkerRole.PREFILL;
            case "decode" -> WorkerRole.DECODE;
            default -> null;
        };
    }

    private static @Nullable WorkerRole workerTypeClaim(String workerType) {
        return switch (workerType.toLowerCase(Locale.ROOT)) {
            case "prefill" -> WorkerRole.PREFILL;
            case "decode" -> WorkerRole.DECODE;
            case "aggregated" -> WorkerRole.AGGREGATED;
            default -> null;
        };
    }
}
