package dev.continuum.router.admin;

import dev.continuum.router.proxy.http.LocalResponse;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The live fleet page, {@code GET /admin/ui} and its assets (script, style, icon), served from the jar behind admin auth like every
 * {@code /admin/} path. Nothing is fetched from elsewhere: the Content-Security-Policy lets the page load only its
 * own script and style and call only this origin. The page polls the admin API (docs/decisions-page.md).
 */
public final class FleetPage {
    public static final String PATH = "/admin/ui";
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
            + "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    private static final String RESOURCES = "/dev/continuum/router/admin/ui/";

    private FleetPage() {
    }

    /** Adds the page and its assets to {@code admin}; the assets are read once, here. */
    public static AdminRoute.Builder register(AdminRoute.Builder admin) {
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
