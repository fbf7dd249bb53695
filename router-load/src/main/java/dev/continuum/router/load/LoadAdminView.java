package dev.continuum.router.load;

import dev.continuum.router.eventplane.ChannelFamilyView;
import dev.continuum.router.eventplane.SubscriptionView;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The load part of {@code GET /admin/dynamo/workers}: {@code load_publishers} and the {@code subscriptions}
 * list. A pure function; the admin route merges the result into its response. IDs are decimal strings, an
 * unknown component is {@code null} (never omitted), and no address appears.
 */
public final class LoadAdminView {
    private LoadAdminView() {
    }

    /** From a running supervisor. */
    public static Map<String, Object> render(LoadSupervisor supervisor) {
        return render(supervisor.loadPublishers(), supervisor.subscriptions());
    }

    /**
     * From a running load supervisor and the kv-events family: {@code load_publishers},
     * {@code kv_event_publishers}, and one {@code subscriptions} list with the kv_metrics subscriptions first.
     */
    public static Map<String, Object> render(LoadSupervisor supervisor, ChannelFamilyView kvEvents) {
        List<SubscriptionView> all = new ArrayList<>(supervisor.subscriptions());
        all.addAll(kvEvents.subscriptions());
        Map<String, Object> rendered = render(supervisor.loadPublishers(), all);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("load_publishers", rendered.get("load_publishers"));
        out.put("kv_event_publishers", kvEvents.publishers());
        out.put("subscriptions", rendered.get("subscriptions"));
        return out;
    }

    /**
     * @param loadPublishers kv_metrics publishers discovered (admitted or not)
     * @param subscriptions  running subscriptions, in the order to show
     * @return {@code {"load_publishers": n, "subscriptions": [{family, publisher_id, namespace, component,
     *         state, transport, broker}, ...]}}, keys in that order ({@code broker} is null unless a broker
     *         carries the connected subscription)
     */
    public static Map<String, Object> render(int loadPublishers, List<SubscriptionView> subscriptions) {
        List<Map<String, Object>> rows = new ArrayList<>(subscriptions.size());
        for (SubscriptionView s : subscriptions) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("family", s.family());
            row.put("publisher_id", Long.toUnsignedString(s.publisherId()));
            row.put("namespace", s.namespace());
            row.put("component", s.component());
            row.put("state", s.state().label());
            row.put("transport", s.transport().label());
            row.put("broker", s.broker());
            rows.add(row);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("load_publishers", loadPublishers);
        out.put("subscriptions", rows);
        return out;
    }
}
