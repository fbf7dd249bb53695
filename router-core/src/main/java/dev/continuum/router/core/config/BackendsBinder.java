package dev.continuum.router.core.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Binds {@code backends}. */
final class BackendsBinder {
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    static final String NAME_EXPECTATION = "a name matching [A-Za-z0-9._-]{1,64}";
    static final String URL_EXPECTATION = "an absolute http or https URL with a host";
    static final String TYPE_EXPECTATION =
            "one of openai, ollama, vllm, localai, lmstudio, llamacpp, mlxcel, continuum";
    static final String RESPONSES_API_EXPECTATION = "one of converted, native";
    static final String TRANSLATED_TYPE_EXPECTATION =
            "an OpenAI-wire backend type; anthropic/gemini translation is not in this build";

    private BackendsBinder() {
    }

    static List<BackendConfig> bind(ConfigNode node, List<String> paths, HealthCheckConfig globalHealth) {
        if (node.kind() == ConfigNode.Kind.MAP || node.kind() == ConfigNode.Kind.SCALAR) {
            node.invalid("a list of backends");
            return List.of();
        }
        List<BackendConfig> out = new ArrayList<>();
        Map<String, String> names = new HashMap<>();
        for (ConfigNode entry : node.elements()) {
            if (entry.kind() != ConfigNode.Kind.MAP) {
                entry.invalid("a map with name, type and url");
                continue;
            }
            BackendConfig backend = bindOne(entry, globalHealth);
            if (backend == null) {
                continue;
            }
            String first = names.putIfAbsent(backend.name(), entry.path());
            if (first != null) {
                entry.get("name").invalid("a unique name; also used by " + first);
            }
            out.add(backend);
            paths.add(entry.path());
        }
        return out;
    }

    /** Null only when the entry has no usable name (cross-checks then cannot refer to it anyway). */
    private static @Nullable BackendConfig bindOne(ConfigNode n, HealthCheckConfig globalHealth) {
        ConfigNode nameNode = n.get("name");
        String name = nameNode.asStringOrNull();
        if (!nameNode.isPresent()) {
            nameNode.invalid(NAME_EXPECTATION);
        } else if (name != null && !NAME.matcher(name).matches()) {
            nameNode.invalid(NAME_EXPECTATION);
        }
        BackendType type = type(n.get("type"));
        URI url = url(n.get("url"));
        List<String> models = uniqueStrings(n.get("models"), "a non-empty model id");
        BackendRole role = n.get("role").asChoice(BackendRole.UNIFIED, BackendsBinder::role,
                "one of unified, prefill, decode");
        int weight = n.get("weight").asInt(1, 1, 1000);
        Secret apiKey = n.get("api_key").asSecret();
        if (apiKey != null && apiKey.reveal().isEmpty()) {
            apiKey = null; // an empty key (for example an unset ${VAR}, already warned about) sends none
        }
        ConfigNode timeoutNode = n.get("timeout");
        Duration timeout = timeoutNode.isPresent() ? timeoutNode.asPositiveDuration(Duration.ZERO) : null;
        if (timeout != null && timeout.isZero()) {
            timeout = null;
        }
        boolean enabled = n.get("enabled").asBool(true);
        boolean internal = n.get("internal").asBool(false);
        boolean singleLeadingSystem = n.get("requires_single_leading_system").asBool(false);
        ResponsesApi responsesApi = n.get("responses_api").asChoice(ResponsesApi.CONVERTED, ResponsesApi::parse,
                RESPONSES_API_EXPECTATION);
        ConfigNode perBackendHealth = n.get("health_check");
        HealthCheckConfig health = null;
        if (perBackendHealth.kind() == ConfigNode.Kind.MAP) {
            health = PolicyBinders.healthChecks(perBackendHealth, globalHealth);
        } else if (perBackendHealth.isPresent()) {
            perBackendHealth.invalid("a map of health_checks keys for this backend");
        }
        if (name == null || name.isEmpty()) {
            return null;
        }
        return new BackendConfig(name, type, url, models, role, weight, apiKey, timeout, enabled, internal,
                responsesApi, health, singleLeadingSystem);
    }

    private static BackendType type(ConfigNode node) {
        if (!node.isPresent()) {
            return BackendType.OPENAI;
        }
        BackendType parsed = node.asChoice(BackendType.OPENAI, BackendType::parse, TYPE_EXPECTATION);
        if (!parsed.speaksOpenAiWire()) {
            node.invalid(TRANSLATED_TYPE_EXPECTATION);
            return BackendType.OPENAI;
        }
        return parsed;
    }

    private static final URI PLACEHOLDER_URL = URI.create("http://invalid.invalid");

    private static URI url(ConfigNode node) {
        if (!node.isPresent()) {
            node.invalid(URL_EXPECTATION);
            return PLACEHOLDER_URL;
        }
        String text = node.asStringOrNull();
        if (text == null) {
            return PLACEHOLDER_URL;
        }
        URI uri = parseUrl(node, text.trim());
        return uri == null ? PLACEHOLDER_URL : uri;
    }

    /** Validates a backend URL; problems show it with any user:password masked. */
    static @Nullable URI parseUrl(ConfigNode node, String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            invalidUrl(node, text, URL_EXPECTATION);
            return null;
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!uri.isAbsolute() || uri.isOpaque() || !(scheme.equals("http") || scheme.equals("https"))) {
            invalidUrl(node, text, URL_EXPECTATION);
            return null;
        }
        if (uri.getRawUserInfo() != null) {
            invalidUrl(node, text, "no credentials in the URL; use api_key");
            return null;
        }
        if (uri.getHost() == null) {
            invalidUrl(node, text, URL_EXPECTATION);
            return null;
        }
        if (uri.getRawQuery() != null || text.contains("?")) {
            invalidUrl(node, text, "no query string");
            return null;
        }
        if (uri.getRawFragment() != null || text.contains("#")) {
            invalidUrl(node, text, "no fragment");
            return null;
        }
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1); // the proxy appends /v1/...; keep one slash
        }
        return URI.create(scheme + "://" + uri.getRawAuthority() + path);
    }

    private static void invalidUrl(ConfigNode node, String text, String expectation) {
        node.error(Problems.render(Problems.maskUserInfo(text)) + " (expected: " + expectation + ")");
    }

    private static @Nullable BackendRole role(String text) {
        for (BackendRole r : BackendRole.values()) {
            if (r.yamlName().equalsIgnoreCase(text)) {
                return r;
            }
        }
        return null;
    }

    /** A list of non-empty strings, each once; {@code what} describes one element. */
    static List<String> uniqueStrings(ConfigNode node, String what) {
        if (node.kind() == ConfigNode.Kind.SCALAR || node.kind() == ConfigNode.Kind.MAP) {
            node.invalid("a list");
            return List.of();
        }
        List<String> out = new ArrayList<>();
        Map<String, String> seen = new LinkedHashMap<>();
        for (ConfigNode e : node.elements()) {
            String s = e.asStringOrNull();
            if (s == null) {
                if (e.kind() == ConfigNode.Kind.NULL) {
                    e.invalid(what);
                }
                continue;
            }
            if (s.isBlank()) {
                e.invalid(what);
                continue;
            }
            String first = seen.putIfAbsent(s, e.path());
            if (first != null) {
                e.invalid("each value once; also at " + first);
                continue;
            }
            out.add(s);
        }
        return out;
    }
}
