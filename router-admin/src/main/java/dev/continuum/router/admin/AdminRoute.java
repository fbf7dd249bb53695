package dev.continuum.router.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.continuum.router.admin.AdminAuthenticator.Decision;
import dev.continuum.router.core.config.ReloadResult;
import dev.continuum.router.proxy.http.LocalRequest;
import dev.continuum.router.proxy.http.LocalResponse;
import dev.continuum.router.proxy.http.LocalRoute;
import io.netty.handler.codec.http.HttpMethod;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Everything under {@code /admin/}: authentication first, then the endpoint, then one audit line.
 * Blocking by declaration, because a reload reads files; the server runs it off the event loop.
 */
public final class AdminRoute implements LocalRoute {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final AdminAuthenticator authenticator;
    private final Map<String, AdminEndpoint> endpoints;
    /** Endpoints under a path prefix ({@code /admin/config/versions/}), the rest of the path being an argument. */
    private final Map<String, AdminEndpoint> prefixes;

    /** One admin endpoint: a method and a path, answering with a JSON tree. */
    public record AdminEndpoint(HttpMethod method, PrincipalHandler handler) {
    }

    /** Answers one authenticated admin call. */
    @FunctionalInterface
    public interface Handler {
        LocalResponse handle(LocalRequest request) throws Exception;
    }

    /** Answers one authenticated admin call knowing who made it (for an audit line of what it changed). */
    @FunctionalInterface
    public interface PrincipalHandler {
        LocalResponse handle(LocalRequest request, String principal) throws Exception;
    }

    private AdminRoute(AdminAuthenticator authenticator, Map<String, AdminEndpoint> endpoints,
                       Map<String, AdminEndpoint> prefixes) {
        this.authenticator = authenticator;
        this.endpoints = Map.copyOf(endpoints);
        this.prefixes = Map.copyOf(prefixes);
    }

    /** The config endpoints every build has; later modules add theirs with {@link Builder#endpoint}. */
    public static Builder builder(AdminAuthenticator authenticator, ConfigReadback readback,
                                  ConfigReloader reloader) {
        Builder b = new Builder(authenticator);
        Handler showConfig = request -> json(200, readback.maskedTree());
        b.endpoint("/admin/config", HttpMethod.GET, showConfig);
        b.endpoint("/admin/config/full", HttpMethod.GET, showConfig);
        b.endpoint("/admin/config/reload", HttpMethod.POST, request -> {
            ReloadResult result = reloader.reload("admin");
            return json(result.result() == ReloadResult.Outcome.FAILURE ? 422 : 200, result.toTree());
        });
        return b;
    }

    public static final class Builder {
        private final AdminAuthenticator authenticator;
        private final Map<String, AdminEndpoint> endpoints = new LinkedHashMap<>();
        private final Map<String, AdminEndpoint> prefixes = new LinkedHashMap<>();

        private Builder(AdminAuthenticator authenticator) {
            this.authenticator = authenticator;
        }

        public Builder endpoint(String path, HttpMethod method, Handler handler) {
            endpoints.put(path, new AdminEndpoint(method, (request, principal) -> handler.handle(request)));
            return this;
        }

        public Builder endpoint(String path, HttpMethod method, PrincipalHandler handler) {
            endpoints.put(path, new AdminEndpoint(method, handler));
            return this;
        }

        /** Every path under {@code prefix} (which ends with {@code /}); exact paths are matched first. */
        public Builder prefix(String prefix, HttpMethod method, PrincipalHandler handler) {
            if (!prefix.endsWith("/")) {
                throw new IllegalArgumentException("prefix: " + prefix + " (expected: a path ending with /)");
            }
            prefixes.put(prefix, new AdminEndpoint(method, handler));
            return this;
        }

        AdminAuthenticator authenticator() {
            return authenticator;
        }

        /** The handler registered at exact {@code path}; for an endpoint that re-serves others' answers. */
        PrincipalHandler handler(String path) {
            AdminEndpoint e = endpoints.get(path);
            if (e == null) {
                throw new IllegalStateException("no admin endpoint registered at " + path);
            }
            return e.handler();
        }

        public AdminRoute build() {
            return new AdminRoute(authenticator, endpoints, prefixes);
        }
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public CompletableFuture<LocalResponse> handle(LocalRequest request) {
        Decision decision = authenticator.check(request.header("authorization"), request.header("x-api-key"));
        LocalResponse response = switch (decision.verdict()) {
            case DISABLED -> error(404, "not_found_error", "not_found",
                    "The admin API is disabled: configure admin.auth to enable it");
            case UNAUTHORIZED -> error(401, "authentication_error", "invalid_admin_credentials",
                    "Missing or invalid admin credentials").withHeader("WWW-Authenticate", challenge(decision));
            case ALLOWED -> dispatch(request, decision.principal());
        };
        String outcome = switch (decision.verdict()) {
            case DISABLED -> "disabled";
            case UNAUTHORIZED -> "denied";
            case ALLOWED -> "allowed";
        };
        AdminAuditLog.record(request.method().name(), request.path(), decision.principal(), outcome,
                response.status(), request.remoteAddress());
        return CompletableFuture.completedFuture(response);
    }

    private LocalResponse dispatch(LocalRequest request, String principal) {
        AdminEndpoint endpoint = endpoints.get(request.path());
        if (endpoint == null) {
            for (Map.Entry<String, AdminEndpoint> e : prefixes.entrySet()) {
                if (request.path().startsWith(e.getKey()) && request.path().length() > e.getKey().length()) {
                    endpoint = e.getValue();
                    break;
                }
            }
        }
        if (endpoint == null) {
            return error(404, "not_found_error", "not_found", "No admin endpoint at this path");
        }
        if (!endpoint.method().equals(request.method())) {
            return error(405, "invalid_request_error", "method_not_allowed",
                    "Use " + endpoint.method().name() + " for this admin endpoint")
                    .withHeader("Allow", endpoint.method().name());
        }
        try {
            return endpoint.handler().handle(request, principal);
        } catch (Exception e) {
            org.slf4j.LoggerFactory.getLogger(AdminRoute.class).warn("admin endpoint {} failed",
                    dev.continuum.router.core.logging.LogSafe.escape(request.path()), e);
            return error(500, "server_error", "internal_error", "The admin endpoint failed; see the router log");
        }
    }

    private static String challenge(Decision decision) {
        return switch (decision.principal()) {
            case "basic" -> "Basic realm=\"continuum-router\"";
            default -> "Bearer realm=\"continuum-router\"";
        };
    }

    /** A JSON answer from any Jackson-serializable tree or record. */
    public static LocalResponse json(int status, Object tree) {
        try {
            return LocalResponse.json(status, JSON.writeValueAsBytes(tree));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("admin answer is not serializable", e);
        }
    }

    static LocalResponse error(int status, String type, String code, String message) {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("message", message);
        error.put("type", type);
        error.put("code", code);
        error.put("param", null);
        return json(status, Map.of("error", error));
    }
}
