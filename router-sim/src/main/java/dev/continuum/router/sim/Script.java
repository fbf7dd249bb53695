package dev.continuum.router.sim;

import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** Runs a list of {@link Misbehaviour}s against a fleet on its own daemon timer; close cancels what is pending. */
public final class Script implements AutoCloseable {
    private final ScheduledExecutorService timer;

    private Script(ScheduledExecutorService timer) {
        this.timer = timer;
    }

    /** Schedules every step from now; refuses a worker index the fleet does not have. */
    public static Script start(SimFleet fleet, List<Misbehaviour> steps) {
        for (Misbehaviour m : steps) {
            if (m.worker() >= fleet.workers().size()) {
                throw new IllegalArgumentException(m.kind() + " " + m.worker() + ": the fleet has workers #0 to #"
                        + (fleet.workers().size() - 1));
            }
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sim-script");
            t.setDaemon(true);
            return t;
        });
        for (Misbehaviour m : steps) {
            SimWorker w = fleet.worker(m.worker());
            timer.schedule(() -> m.apply(w), m.at().toMillis(), TimeUnit.MILLISECONDS);
            if (m.lasting() != null) {
                timer.schedule(() -> m.undo(w), m.at().plus(m.lasting()).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        return new Script(timer);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
