package dev.continuum.router.admin;

import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.shim.decisions.DecisionLog;
import dev.continuum.router.shim.decisions.DecisionQuery;
import dev.continuum.router.shim.decisions.DecisionRecord;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET /admin/dynamo/decisions} (newest first, filtered and paged) and {@code GET
 * /admin/dynamo/decisions/{id}} (one record with its candidates' terms). See docs/admin-api.md.
 */
public final class DecisionsEndpoint {
    public static final String PATH = "/admin/dynamo/decisions";
    /** The longest query string read; longer ones are refused, not parsed. */
    static final int MAX_QUERY_CHARS = 1024;

    private final Supplier<@Nullable DecisionLog> log;

    /** @param log the dispatcher's decision log, or null while none is kept */
    public DecisionsEndpoint(Supplier<@Nullable DecisionLog> log) {
        this.log = log;
    }

    /** Adds both endpoints to {@code admin}. */
    public AdminRoute.Builder register(AdminRoute.Builder admin) {
        return admin.endpoint(PATH, io.netty.handler.codec.http.HttpMethod.GET, this::list)
                .prefix(PATH + "/", io.netty.handler.codec.http.HttpMethod.GET, (request, principal) -> one(request));
    }

    LocalResponse list(LocalRequest request) {
        DecisionLog decisions = log.get();
        if (decisions == null) {
            return AdminRoute.error(404, "not_found_error", "decisions_off", "No decision log: Dynamo routing is not wired");
        }
        String raw = request.rawQuery();
        if (raw != null && raw.length() > MAX_QUERY_CHARS) {
            return bad("the query string is longer than " + MAX_QUERY_CHARS + " characters");
        }
        DecisionQuery query;
        try {
            Map<String, String> q = parse(raw);
            String worker = q.get("worker");
            String before = q.get("before");
            String limit = q.get("limit");
            query = new DecisionQuery(q.get("model"), worker == null ? null : Long.parseUnsignedLong(worker, 16),
                    q.get("result"), time(q.get("since")), time(q.get("until")),
                    before == null ? Long.MAX_VALUE : Long.parseLong(before),
                    limit == null ? DecisionQuery.DEFAULT_LIMIT : Integer.parseInt(limit));
        } catch (IllegalArgumentException | DateTimeParseException e) {
            return bad("worker is a hex instance ID, since/until ISO-8601 instants, before an id, limit 1.."
                    + DecisionQuery.MAX_LIMIT);
        }
        List<DecisionRecord> found = decisions.query(query);
        List<Object> out = new ArrayList<>(found.size());
        for (DecisionRecord r : found) {
            out.add(DecisionJson.summary(r));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("enabled", decisions.settings().enabled());
        body.put("decisions", out);
        body.put("next_before", found.size() == query.limit() ? Long.toString(found.get(found.size() - 1).id()) : null);
        body.put("totals", DecisionJson.totals(decisions.totals()));
        return AdminRoute.json(200, body);
    }

    LocalResponse one(LocalRequest request) {
        DecisionLog decisions = log.get();
        String id = request.path().substring(PATH.length() + 1);
        DecisionRecord r = null;
        if (decisions != null && id.length() <= 19 && id.chars().allMatch(c -> c >= '0' && c <= '9')) {
            r = decisions.get(Long.parseLong(id));
        }
        if (r == null) {
            return AdminRoute.error(404, "not_found_error", "decision_not_found",
                    "No such decision is kept (never recorded, or displaced from the ring)");
        }
        return AdminRoute.json(200, DecisionJson.detail(r));
    }

    private static @Nullable Long time(@Nullable String iso) {
        return iso == null ? null : Instant.parse(iso).toEpochMilli();
    }

    private static LocalResponse bad(String message) {
        return AdminRoute.error(400, "invalid_request_error", "invalid_query", message);
    }

    /** The query's parameters, decoded; the last of a repeated name wins. */
    static Map<String, String> parse(@Nullable String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&", 16)) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return out;
    }
}
