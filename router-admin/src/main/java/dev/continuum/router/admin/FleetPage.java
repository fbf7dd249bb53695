package dev.continuum.router.admin;

import dev.continuum.router.core.lifecycle.OwnedExecutor;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The live fleet page, {@code GET /admin/ui} and its assets (script, style, icon), served from the jar behind admin auth like every
 * {@code /admin/} path. Nothing is fetched from elsewhere: the Content-Security-Policy lets the page load only its
 * own script and style and call only this origin ({@code connect-src 'self'} covers both its fetches and its event
 * stream). The page takes its updates from {@link FleetEvents} and polls the admin API when the stream fails
 * (docs/decisions-page.md).
 */
public final class FleetPage {
    public static final String PATH = "/admin/ui";
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
            + "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final String RESOURCES = "/dev/continuum/router/admin/ui/";

    private FleetPage() {
    }

    /** What an event frame carries: the answers the page polls, under the names its frames use. */
    static final Map<String, String> FRAME_PARTS = orderedParts();

    private static Map<String, String> orderedParts() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("ranks", FleetRanksEndpoint.PATH);
        m.put("workers", "/admin/dynamo/workers");
        m.put("decisions", DecisionsEndpoint.PATH + "?limit=" + LATEST_DECISIONS);
        return m;
    }

    /** Decisions a frame carries (the page shows as many). */
    static final int LATEST_DECISIONS = 25;

    /**
     * Adds the page, its assets and its event stream to {@code admin}, which must already serve the endpoints in
     * {@link #FRAME_PARTS}; the assets are read once, here. {@code events} runs the stream's ticks
     * ({@link FleetEvents#ticker}): the caller's lifecycle starts it before the server and stops it after.
     */
    public static AdminRoute.Builder register(AdminRoute.Builder admin, MeterRegistry registry, OwnedExecutor events) {
        Map<String, Callable<LocalResponse>> parts = new LinkedHashMap<>();
        for (Map.Entry<String, String> p : FRAME_PARTS.entrySet()) {
            int q = p.getValue().indexOf('?');
            String path = q < 0 ? p.getValue() : p.getValue().substring(0, q);
            String query = q < 0 ? null : p.getValue().substring(q + 1);
            AdminRoute.PrincipalHandler h = admin.handler(path);
            LocalRequest get = new LocalRequest(HttpMethod.GET, path, query, EmptyHttpHeaders.INSTANCE, new byte[0],
                    null);
            parts.put(p.getKey(), () -> h.handle(get, "events"));
        }
        admin.endpoint(FleetEvents.PATH, HttpMethod.GET, new FleetEvents(admin.authenticator(), parts, registry,
                events));
        LocalResponse page = asset("index.html", "text/html; charset=utf-8");
        LocalResponse script = asset("app.js", "text/javascript; charset=utf-8");
        LocalResponse style = asset("app.css", "text/css; charset=utf-8");
        LocalResponse icon = asset("favicon.svg", "image/svg+xml");
        return admin.endpoint(PATH, HttpMethod.GET, request -> page)
                .endpoint(PATH + "/", HttpMethod.GET, request -> page)
                .endpoint(PATH + "/app.js", HttpMethod.GET, request -> script)
                .endpoint(PATH + "/app.css", HttpMethod.GET, request -> style)
                .endpoint(PATH + "/favicon.svg", HttpMethod.GET, request -> icon);
    }

    private static LocalResponse asset(String name, String contentType) {
        try (InputStream in = FleetPage.class.getResourceAsStream(RESOURCES + name)) {
            if (in == null) {
                throw new IllegalStateException("fleet page asset missing from the jar: " + name);
            }
            return new LocalResponse(200, contentType, in.readAllBytes(), Map.of(
                    "Content-Security-Policy", CSP,
                    "X-Content-Type-Options", "nosniff",
                    "Referrer-Policy", "no-referrer",
                    "Cache-Control", "no-store"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
