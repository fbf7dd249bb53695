package dev.continuum.router.app;

import static org.awaitility.Awaitility.await;

import dev.continuum.router.eventbus.BusSession;
import dev.continuum.router.eventplane.SubscriptionState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The failover benchmark of docs/benchmarks.md, on {@link EventBrokerEndToEndTest}'s fleet (two broker OS
 * processes, fabric8's mock API server, six JeroMQ kv_metrics publishers, the router's bus and a broker-transport
 * load supervisor in this JVM). Each trial SIGKILLs the broker carrying every stream and times how long until
 * every subscription is connected again on the surviving broker; then starts a new broker under the killed
 * identity (it takes no streams: open streams never move to a joining broker) for the next trial to fail over
 * to. Prints min/median/max over {@code -Dtrials} (default 20).
 *
 * <p>Not part of the suite (the name does not end in Test); run it with
 * {@code ./mvnw -B -ntp -o -q -pl router-app -am test -Dtest=EventBusFailoverBench -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class EventBusFailoverBench {
    @TempDir
    Path dir;

    @Test
    void sigkillToAllConnectedOnTheSurvivingBroker() throws Exception {
        int trials = Integer.getInteger("trials", 20);
        EventBrokerEndToEndTest fleet = new EventBrokerEndToEndTest();
        fleet.dir = dir;
        fleet.setUp();
        try {
            String[][] identities = {{"broker-a", EventBrokerEndToEndTest.TOKEN_A},
                    {"broker-b", EventBrokerEndToEndTest.TOKEN_B}};
            Process[] running = new Process[2];
            running[0] = fleet.startBroker("broker-a-0", "broker-a", EventBrokerEndToEndTest.TOKEN_A);
            await().atMost(Duration.ofSeconds(120)).until(() -> fleet.all(fleet.broker,
                    SubscriptionState.CONNECTED) && carried(fleet, "broker-a") == 6);
            running[1] = fleet.startBroker("broker-b-0", "broker-b", EventBrokerEndToEndTest.TOKEN_B);
            await().atMost(Duration.ofSeconds(120)).until(() -> fleet.session("broker-b.dynamo") != null);
            int carrier = 0; // the broker holding all six streams
            List<Double> millis = new ArrayList<>();
            for (int t = 0; t < trials; t++) {
                int survivor = 1 - carrier;
                String survivorId = identities[survivor][0];
                long killed = System.nanoTime();
                running[carrier].destroyForcibly();
                await().pollInSameThread().pollInterval(Duration.ofMillis(2)).atMost(Duration.ofSeconds(60))
                        .until(() -> carried(fleet, survivorId) == 6
                                && fleet.all(fleet.broker, SubscriptionState.CONNECTED));
                millis.add((System.nanoTime() - killed) / 1e6);
                running[carrier].waitFor(30, TimeUnit.SECONDS);
                String id = identities[carrier][0];
                running[carrier] = fleet.startBroker(id + "-" + (t + 1), id, identities[carrier][1]);
                await().atMost(Duration.ofSeconds(120)).until(() -> fleet.session(id + ".dynamo") != null);
                carrier = survivor;
            }
            Collections.sort(millis);
            System.out.printf("failover over %d trials, SIGKILL to 6/6 connected on the survivor: min %.0f ms, "
                            + "median %.0f ms, max %.0f ms; all: %s%n", trials, millis.get(0),
                    median(millis), millis.get(millis.size() - 1), millis);
        } finally {
            fleet.tearDown();
        }
    }

    private static double median(List<Double> sorted) {
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static int carried(EventBrokerEndToEndTest fleet, String clientId) {
        BusSession s = fleet.session(clientId + ".dynamo");
        return s == null || !s.isLive() ? 0 : s.streamCount();
    }
}
