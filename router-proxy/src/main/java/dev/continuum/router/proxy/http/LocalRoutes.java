package dev.continuum.router.proxy.http;

import dev.continuum.router.proxy.metrics.Endpoint;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The registered local routes: an exact-path map, then prefixes longest first. Immutable. */
final class LocalRoutes {
    record Entry(String template, LocalRoute route, Endpoint endpoint) {
    }

    private final Map<String, Entry> exact;
    private final List<Entry> prefixes;

    LocalRoutes(Map<String, LocalRoute> exactRoutes, Map<String, LocalRoute> prefixRoutes, String metricsPath) {
        Map<String, Entry> e = new HashMap<>();
        exactRoutes.forEach((path, route) ->
                e.put(path, new Entry(path, route, Endpoint.forLocalRoute(path, metricsPath))));
        List<Entry> p = new ArrayList<>();
        prefixRoutes.forEach((prefix, route) ->
                p.add(new Entry(prefix, route, Endpoint.forLocalRoute(prefix, metricsPath))));
        p.sort(Comparator.comparingInt((Entry x) -> x.template().length()).reversed());
        this.exact = Map.copyOf(e);
        this.prefixes = List.copyOf(p);
    }

    @Nullable Entry find(String path) {
        Entry e = exact.get(path);
        if (e != null) {
            return e;
        }
        for (int i = 0; i < prefixes.size(); i++) {
            Entry p = prefixes.get(i);
            if (path.startsWith(p.template())) {
                return p;
            }
        }
        return null;
    }
}
