package dev.continuum.router.proxy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** The proxy's path table: the built-in OpenAI routes and the registered ingresses, fixed at creation. */
final class ProxyRoutes {
    private final Map<String, ProxyRoute> byPath;

    private ProxyRoutes(Map<String, ProxyRoute> byPath) {
        this.byPath = byPath;
    }

    static ProxyRoutes of(List<ProxyRoute> ingresses) {
        Map<String, ProxyRoute> m = new HashMap<>();
        for (ProxyRoute r : List.of(ProxyRoute.CHAT_COMPLETIONS, ProxyRoute.COMPLETIONS, ProxyRoute.MODELS,
                ProxyRoute.EMBEDDINGS, ProxyRoute.RERANK)) {
            m.put(r.path(), r);
        }
        for (ProxyRoute r : ingresses) {
            if (m.putIfAbsent(r.path(), r) != null) {
                throw new IllegalArgumentException("ingresses: " + r.path() + " (expected: a path no other route has)");
            }
        }
        return new ProxyRoutes(Map.copyOf(m));
    }

    @Nullable ProxyRoute find(String path) {
        return byPath.get(path);
    }
}
