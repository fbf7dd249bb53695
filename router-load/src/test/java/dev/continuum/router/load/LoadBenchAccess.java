package dev.continuum.router.load;

/** Package internals the benchmark main reads. */
public final class LoadBenchAccess {
    private LoadBenchAccess() {
    }

    public static double applied(LoadSupervisor supervisor) {
        return ((DefaultLoadSupervisor) supervisor).metrics().total(LoadEventResult.APPLIED);
    }

    public static long connected(LoadSupervisor supervisor) {
        return supervisor.subscriptions().stream().filter(s -> s.state() == SubscriptionState.CONNECTED).count();
    }
}
