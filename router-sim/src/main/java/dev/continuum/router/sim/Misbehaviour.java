package dev.continuum.router.sim;

import java.time.Duration;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * One scripted misbehaviour of one worker: from {@code at} after the fleet starts, for {@code lasting} (or until
 * the fleet stops when null). {@link Kind#SILENCE}: no kv_metrics, requests still served. {@link Kind#STALL}:
 * requests accepted, nothing emitted.
 *
 * @param worker the worker's index in {@link SimFleet#workers()} (the {@code #n} of {@link SimFleet#describe()})
 */
public record Misbehaviour(Kind kind, int worker, Duration at, @Nullable Duration lasting) {
    public enum Kind { SILENCE, STALL }

    public Misbehaviour {
        if (worker < 0 || at.isNegative() || (lasting != null && (lasting.isNegative() || lasting.isZero()))) {
            throw new IllegalArgumentException(kind.name().toLowerCase(Locale.ROOT) + ": worker " + worker + " at "
                    + at + " lasting " + lasting + " (expected: worker >= 0, at >= 0, lasting > 0)");
        }
    }

    /**
     * The command-line form {@code W@T[+D]}: worker index {@code W}, start {@code T} seconds after the fleet
     * started, for {@code D} seconds (decimals allowed); without {@code +D} until the fleet stops.
     */
    public static Misbehaviour parse(Kind kind, String spec) {
        int atSign = spec.indexOf('@');
        if (atSign <= 0) {
            throw new IllegalArgumentException("--" + kind.name().toLowerCase(Locale.ROOT) + " " + spec
                    + ": expected W@T[+D] (worker index, start and duration in seconds)");
        }
        int plus = spec.indexOf('+', atSign);
        int worker = Integer.parseInt(spec.substring(0, atSign).trim());
        Duration at = seconds(spec.substring(atSign + 1, plus < 0 ? spec.length() : plus));
        Duration lasting = plus < 0 ? null : seconds(spec.substring(plus + 1));
        return new Misbehaviour(kind, worker, at, lasting);
    }

    private static Duration seconds(String text) {
        return Duration.ofMillis(Math.round(Double.parseDouble(text.trim()) * 1000));
    }

    void apply(SimWorker w) {
        if (kind == Kind.SILENCE) {
            w.silence();
        } else {
            w.stall();
        }
    }

    void undo(SimWorker w) {
        if (kind == Kind.SILENCE) {
            w.unsilence();
        } else {
            w.resume();
        }
    }
}
