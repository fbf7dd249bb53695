package dev.continuum.router.load;

import dev.continuum.router.eventplane.SubscriptionState;
import static dev.continuum.router.load.Fixtures.publisher;
import static dev.continuum.router.load.Fixtures.targets;
import static dev.continuum.router.load.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.continuum.router.discovery.DynamoPublisher;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

/** 1025 real publishers: the 1024 lowest publisher IDs are subscribed at once, the last one only when a slot frees. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ThousandSubscriptionsTest {
    @Test
    void subscribesTo1024PublishersAtOnceInAscendingPublisherIdOrder() {
        try (ZContext zmq = new ZContext(1)) {
            zmq.getContext().setMaxSockets(2048); // JeroMQ's default is 1023 sockets per context
            List<TestPublisher> pubs = new ArrayList<>();
            List<DynamoPublisher> records = new ArrayList<>();
            for (int i = 0; i <= LoadSupervisor.MAX_SUBSCRIPTIONS; i++) {
                long id = 5_000 - i; // discovery order is not admission order
                TestPublisher p = TestPublisher.bind(zmq, id);
                pubs.add(p);
                records.add(publisher(id, p.address()));
            }
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            LoadSupervisor supervisor = LoadSupervisor.builder(registry).backoff(RealPublisherTest.FAST).build();
            supervisor.start().join();
            try {
                supervisor.update(targets(1, records, worker(1)));

                await().atMost(Duration.ofSeconds(60)).until(() -> supervisor.subscriptions().stream()
                        .filter(s -> s.state() == SubscriptionState.CONNECTED).count() == 1024);
                long highest = 5_000;
                assertThat(supervisor.subscriptions()).hasSize(1024)
                        .noneMatch(s -> s.publisherId() == highest);
                assertThat(supervisor.loadPublishers()).isEqualTo(1025);
                assertThat(registry.get(LoadMetrics.SUBSCRIPTIONS).tags("state", "connected", "transport", "direct")
                        .gauge().value()).isEqualTo(1024.0);

                // The lowest ID leaves: the highest is admitted.
                supervisor.update(targets(2, records.subList(0, 1024), worker(1)));
                await().atMost(Duration.ofSeconds(30)).until(() -> supervisor.subscriptions().stream()
                        .anyMatch(s -> s.publisherId() == highest && s.state() == SubscriptionState.CONNECTED));
                assertThat(supervisor.subscriptions()).hasSize(1024);
            } finally {
                supervisor.stop().join();
                pubs.forEach(TestPublisher::close);
            }
        }
    }
}
