package dev.continuum.router.core.config;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Binds {@code admin}: absent means the admin API is disabled. */
final class AdminBinder {
    static final String METHODS = "one of none, bearer_token, basic, api_key";

    private AdminBinder() {
    }

    static AdminConfig bind(ConfigNode n) {
        if (!n.isPresent()) {
            return AdminConfig.disabled();
        }
        if (n.kind() != ConfigNode.Kind.MAP) {
            n.invalid("a map with enabled and auth");
            return AdminConfig.disabled();
        }
        boolean enabled = n.get("enabled").asBool(true);
        ConfigNode auth = n.get("auth");
        ConfigNode methodNode = auth.get("method");
        AdminConfig.AuthMethod method = methodNode.asChoice(AdminConfig.AuthMethod.BEARER_TOKEN,
                AdminBinder::method, METHODS);
        ConfigNode tokenNode = auth.get("token");
        Secret token = tokenNode.asSecret();
        ConfigNode usernameNode = auth.get("username");
        String username = usernameNode.asStringOrNull();
        ConfigNode passwordNode = auth.get("password");
        Secret password = passwordNode.asSecret();
        ConfigNode apiKeyNode = auth.get("api_key");
        Secret apiKey = apiKeyNode.asSecret();
        if (enabled) {
            switch (method) {
                case NONE -> methodNode.warning("admin API is open without authentication");
                case BEARER_TOKEN -> require(tokenNode, token, "a non-empty token for method bearer_token");
                case BASIC -> {
                    requireText(usernameNode, username, "a non-empty username for method basic");
                    require(passwordNode, password, "a non-empty password for method basic");
                }
                case API_KEY -> require(apiKeyNode, apiKey, "a non-empty api_key for method api_key");
                default -> throw new AssertionError(method);
            }
        }
        return new AdminConfig(enabled, method, token, username, password, apiKey);
    }

    private static void require(ConfigNode node, @Nullable Secret value, String expectation) {
        if (node.kind() == ConfigNode.Kind.LIST || node.kind() == ConfigNode.Kind.MAP) {
            return; // already reported as not a string
        }
        if (value == null) {
            node.invalid(expectation);
        } else if (value.reveal().isEmpty()) {
            node.error("\"\" (expected: " + expectation + ")");
        }
    }

    private static void requireText(ConfigNode node, @Nullable String value, String expectation) {
        if (node.kind() == ConfigNode.Kind.LIST || node.kind() == ConfigNode.Kind.MAP) {
            return;
        }
        if (value == null || value.isEmpty()) {
            node.invalid(expectation);
        }
    }

    private static AdminConfig.@Nullable AuthMethod method(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "none" -> AdminConfig.AuthMethod.NONE;
            case "bearer_token", "bearer" -> AdminConfig.AuthMethod.BEARER_TOKEN;
            case "basic" -> AdminConfig.AuthMethod.BASIC;
            case "api_key" -> AdminConfig.AuthMethod.API_KEY;
            default -> null;
        };
    }
}
