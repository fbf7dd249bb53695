package dev.continuum.router.admin;

import dev.continuum.router.core.config.ConfigHistory;
import dev.continuum.router.core.config.ConfigStore;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.core.config.Problem;
import dev.continuum.router.core.config.ReloadResult;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import io.netty.handler.codec.http.HttpMethod;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The config history endpoints over a {@link ConfigStore}: the applied versions, one version's config
 * (masked), a rollback through the store's reload path, the running config exported (masked), and a
 * validation-only check of a posted document. Each one writes an {@code admin_config} audit line with the
 * principal and what it did. docs/admin-api.md describes the answers.
 */
public final class ConfigHistoryEndpoints {
    /** A posted document is a config file: the same bound as a file read for a reload. */
    static final int MAX_VALIDATE_BYTES = 4 * 1024 * 1024;
    static final String VERSIONS = "/admin/config/versions";
    static final String ROLLBACK = "/admin/config/rollback/";

    private final ConfigStore store;

    private ConfigHistoryEndpoints(ConfigStore store) {
        this.store = store;
    }

    /** Adds the endpoints to {@code builder}. */
    public static AdminRoute.Builder register(AdminRoute.Builder builder, ConfigStore store) {
        ConfigHistoryEndpoints e = new ConfigHistoryEndpoints(store);
        return builder
                .endpoint(VERSIONS, HttpMethod.GET, e::versions)
                .prefix(VERSIONS + "/", HttpMethod.GET, e::version)
                .prefix(ROLLBACK, HttpMethod.POST, e::rollback)
                .endpoint("/admin/config/export", HttpMethod.GET, e::export)
                .endpoint("/admin/config/validate", HttpMethod.POST, e::validate);
    }

    private LocalResponse versions(LocalRequest request, String principal) {
        ConfigHistory h = store.history();
        int current = h.currentNumber();
        List<Map<String, Object>> out = new ArrayList<>();
        for (ConfigHistory.Version v : h.versions()) {
            out.add(summary(v, current));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("current", current);
        body.put("max_versions", ConfigHistory.MAX_VERSIONS);
        body.put("versions", out);
        return AdminRoute.json(200, body);
    }

    private LocalResponse version(LocalRequest request, String principal) {
        Integer n = number(request.path().substring(VERSIONS.length() + 1));
        Optional<ConfigHistory.Version> v = n == null ? Optional.empty() : store.history().version(n);
        if (v.isEmpty()) {
            return notKept(request.path().substring(VERSIONS.length() + 1));
        }
        Map<String, Object> body = summary(v.get(), store.history().currentNumber());
        body.put("config", store.renderer().tree(v.get().config()));
        return AdminRoute.json(200, body);
    }

    private LocalResponse rollback(LocalRequest request, String principal) {
        String arg = request.path().substring(ROLLBACK.length());
        Integer n = number(arg);
        if (n == null || store.history().version(n).isEmpty()) {
            AdminAuditLog.action(principal, "rollback", "version=" + arg + " result=not_found");
            return notKept(arg);
        }
        int before = store.history().currentNumber();
        ReloadResult result = store.rollback(n);
        AdminAuditLog.action(principal, "rollback", "version=" + n + " from=" + before + " result="
                + result.result().label() + " now=" + store.history().currentNumber());
        return AdminRoute.json(result.result() == ReloadResult.Outcome.FAILURE ? 422 : 200, result.toTree());
    }

    private LocalResponse export(LocalRequest request, String principal) {
        String format = query(request.rawQuery(), "format");
        AdminAuditLog.action(principal, "export", "version=" + store.history().currentNumber() + " format="
                + (format == null ? "yaml" : format));
        if (format == null || format.equals("yaml")) {
            return new LocalResponse(200, "application/yaml; charset=utf-8",
                    store.renderer().yaml(store.current()).getBytes(StandardCharsets.UTF_8), Map.of());
        }
        if (format.equals("json")) {
            return AdminRoute.json(200, store.renderer().tree(store.current()));
        }
        return AdminRoute.error(400, "invalid_request_error", "unsupported_format",
                "format must be yaml or json (TOML is not supported in this build)");
    }

    private LocalResponse validate(LocalRequest request, String principal) {
        if (request.body().length > MAX_VALIDATE_BYTES) {
            AdminAuditLog.action(principal, "validate", "bytes=" + request.body().length + " result=too_large");
            return AdminRoute.error(413, "invalid_request_error", "document_too_large",
                    "The document is larger than " + (MAX_VALIDATE_BYTES >> 20) + " MiB");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(request.body())).toString();
        } catch (CharacterCodingException e) {
            AdminAuditLog.action(principal, "validate", "bytes=" + request.body().length + " result=not_utf8");
            return AdminRoute.error(400, "invalid_request_error", "invalid_encoding", "The document is not UTF-8");
        }
        boolean strict = "true".equals(query(request.rawQuery(), "strict"));
        LoadResult result = store.validate(text, strict);
        AdminAuditLog.action(principal, "validate", "bytes=" + request.body().length + " strict=" + strict
                + " result=" + (result.ok() ? "valid" : "invalid") + " errors=" + result.errors().size()
                + " warnings=" + result.warnings().size());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("valid", result.ok());
        body.put("strict", strict);
        body.put("errors", lines(result, result.errors()));
        body.put("warnings", lines(result, result.warnings()));
        return AdminRoute.json(result.ok() ? 200 : 422, body);
    }

    private static List<Map<String, String>> lines(LoadResult result, List<Problem> problems) {
        List<Map<String, String>> out = new ArrayList<>();
        for (Problem p : problems) {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("path", p.path());
            m.put("message", p.message());
            String at = result.locationOf(p);
            if (!at.isEmpty()) {
                m.put("location", at);
            }
            out.add(m);
        }
        return out;
    }

    private static Map<String, Object> summary(ConfigHistory.Version v, int current) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", v.number());
        m.put("applied_at", v.appliedAt().toString());
        m.put("trigger", v.trigger());
        m.put("current", v.number() == current);
        m.put("restorable", v.restorable());
        return m;
    }

    private static LocalResponse notKept(String arg) {
        return AdminRoute.error(404, "not_found_error", "version_not_found",
                "No such config version is kept (the last " + ConfigHistory.MAX_VERSIONS
                        + " applied are; see GET /admin/config/versions)");
    }

    /** A version number: 1..9 ASCII digits, else null. */
    static @Nullable Integer number(String s) {
        if (s.isEmpty() || s.length() > 9) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return null;
            }
        }
        int n = Integer.parseInt(s);
        return n == 0 ? null : n;
    }

    /** The value of {@code key} in a raw query ({@code a=1&b=2}), undecoded; only plain words are looked for. */
    static @Nullable String query(@Nullable String rawQuery, String key) {
        if (rawQuery == null) {
            return null;
        }
        for (String pair : rawQuery.split("&", 16)) {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).equals(key)) {
                return pair.substring(eq + 1);
            }
        }
        return null;
    }
}
