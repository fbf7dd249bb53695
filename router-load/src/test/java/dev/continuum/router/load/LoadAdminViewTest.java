package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelFamilyView;
import dev.continuum.router.eventplane.SubscriptionState;
import dev.continuum.router.eventplane.SubscriptionView;
import static org.assertj.core.api.Assertions.assertThat;

import dev.continuum.router.eventplane.Transport;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoadAdminViewTest {
    @Test
    void rendersPublishersAndSubscriptionsWithDecimalIdsNullComponentsTheCarryingBrokerAndNoAddress() {
        Map<String, Object> out = LoadAdminView.render(3, List.of(
                new SubscriptionView("kv_metrics", 2046539, "dynamo", "decode", SubscriptionState.CONNECTED,
                        Transport.DIRECT),
                new SubscriptionView("kv_metrics", -1L, "dynamo", null, SubscriptionState.PENDING, Transport.BROKER),
                new SubscriptionView("kv_metrics", 7, "dynamo", "decode", SubscriptionState.CONNECTED, Transport.BROKER,
                        "broker-a.dynamo")));

        Map<String, Object> first = new LinkedHashMap<>();
        first.put("family", "kv_metrics");
        first.put("publisher_id", "2046539");
        first.put("namespace", "dynamo");
        first.put("component", "decode");
        first.put("state", "connected");
        first.put("transport", "direct");
        first.put("broker", null);
        Map<String, Object> second = new LinkedHashMap<>(first);
        second.put("publisher_id", "18446744073709551615");
        second.put("component", null);
        second.put("state", "pending");
        second.put("transport", "broker");
        Map<String, Object> third = new LinkedHashMap<>(first);
        third.put("publisher_id", "7");
        third.put("transport", "broker");
        third.put("broker", "broker-a.dynamo");
        assertThat(out).containsExactly(Map.entry("load_publishers", 3),
                Map.entry("subscriptions", List.of(first, second, third)));
        assertThat(out.toString()).doesNotContain("tcp://");
    }

    @Test
    void mergesTheKvEventsFamilyAfterKvMetricsWithItsPublisherCount() {
        LoadSupervisor load = LoadSupervisor.builder(new io.micrometer.core.instrument.simple.SimpleMeterRegistry())
                .build();
        SubscriptionView events = new SubscriptionView("kv-events", 2046540, "dynamo", "decode",
                SubscriptionState.PENDING, Transport.BROKER);
        ChannelFamilyView kv = new ChannelFamilyView() {
            @Override
            public int publishers() {
                return 2;
            }

            @Override
            public List<SubscriptionView> subscriptions() {
                return List.of(events);
            }
        };
        Map<String, Object> out = LoadAdminView.render(load, kv);
        assertThat(out.keySet()).containsExactly("load_publishers", "kv_event_publishers", "subscriptions");
        assertThat(out.get("kv_event_publishers")).isEqualTo(2);
        assertThat(out.get("load_publishers")).isEqualTo(0);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> rows = (List<Map<String, Object>>) out.get("subscriptions");
        assertThat(rows).singleElement().satisfies(r -> {
            assertThat(r).containsEntry("family", "kv-events").containsEntry("publisher_id", "2046540")
                    .containsEntry("state", "pending").containsEntry("transport", "broker");
        });
        assertThat(LoadAdminView.render(load, ChannelFamilyView.NONE)).containsEntry("kv_event_publishers", 0);
    }
}
