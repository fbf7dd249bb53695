package dev.continuum.router.load;

import dev.continuum.router.eventplane.SubscriptionState;
import java.util.LinkedHashMap;
import java.util.Map;

/** Package internals the benchmark main reads. */
public final class LoadBenchAccess {
    private LoadBenchAccess() {
    }

    public static double applied(LoadSupervisor supervisor) {
        return ((DefaultLoadSupervisor) supervisor).metrics().total(LoadEventResult.APPLIED);
    }

    public static double refused(LoadSupervisor supervisor) {
        return ((DefaultLoadSupervisor) supervisor).metrics().total(LoadEventResult.TRANSPORT_REFUSED);
    }

    /** Every message outcome so far (everything but transport_refused), summed. */
    public static double messages(LoadSupervisor supervisor) {
        double sum = 0;
        for (LoadEventResult r : LoadEventResult.values()) {
            if (r != LoadEventResult.TRANSPORT_REFUSED) {
                sum += ((DefaultLoadSupervisor) supervisor).metrics().total(r);
            }
        }
        return sum;
    }

    /** The non-zero {@code continuum_dynamo_load_events_total} series by result label. */
    public static Map<String, Long> results(LoadSupervisor supervisor) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (LoadEventResult r : LoadEventResult.values()) {
            long v = (long) ((DefaultLoadSupervisor) supervisor).metrics().total(r);
            if (v != 0) {
                out.put(r.label(), v);
            }
        }
        return out;
    }

    public static long connected(LoadSupervisor supervisor) {
        return supervisor.subscriptions().stream().filter(s -> s.state() == SubscriptionState.CONNECTED).count();
    }
}
