package dev.continuum.router.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.continuum.router.core.config.internal.Units;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.common.FlowStyle;

/**
 * Turns a {@link RouterConfig} back into its YAML shape (ordered maps, lists and scalars with the
 * YAML key names) for {@code config show} and {@code GET /admin/config}. Every {@link Secret} is shown
 * as {@link Secret#MASK}. Apart from the masks, the readback loads back to an equal config: durations
 * and sizes are written in units the loader reads, and only inline API keys are listed (the keys of
 * {@code api_keys_file} stay in that file, whose path is shown). Thread-safe.
 */
public final class ConfigRenderer {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final List<DynamoSection<?>> sections;

    private ConfigRenderer(List<? extends DynamoSection<?>> sections) {
        this.sections = List.copyOf(sections);
    }

    /** A renderer for a build whose registered dynamo sections are {@code sections}. */
    public static ConfigRenderer of(List<? extends DynamoSection<?>> sections) {
        return new ConfigRenderer(sections);
    }

    /** The masked tree: {@code LinkedHashMap}s, {@code List}s, Strings, Numbers, Booleans. */
    public Map<String, Object> tree(RouterConfig config) {
        return tree(config, false);
    }

    /** The masked readback as YAML. */
    public String yaml(RouterConfig config) {
        DumpSettings settings = DumpSettings.builder()
                .setDefaultFlowStyle(FlowStyle.BLOCK)
                .setIndent(2)
                .setIndicatorIndent(2)
                .setIndentWithIndicator(true)
                .setWidth(120)
                .build();
        return new Dump(settings).dumpToString(tree(config));
    }

    /** The masked readback as JSON (pretty-printed). */
    public String json(RouterConfig config) {
        try {
            return JSON.writeValueAsString(tree(config));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** With {@code reveal}, secrets keep their values: only for tests that load a readback back. */
    @SuppressWarnings("unchecked")
    Map<String, Object> tree(RouterConfig c, boolean reveal) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("server", server(c.server()));
        List<Object> backends = new ArrayList<>();
        c.backends().forEach(b -> backends.add(backend(b)));
        root.put("backends", backends);
        root.put("selection_strategy", c.selectionStrategy().yamlName());
        root.put("health_checks", recordTree(c.healthChecks()));
        root.put("circuit_breaker", recordTree(c.circuitBreaker()));
        root.put("retry", recordTree(c.retry()));
        root.put("rate_limiting", rateLimiting(c.rateLimiting()));
        root.put("api_keys", apiKeys(c.apiKeys()));
        root.put("admin", admin(c.admin()));
        root.put("disaggregated_serving", recordTree(c.disaggregatedServing()));
        root.put("logging", recordTree(c.logging()));
        root.put("metrics", recordTree(c.metrics()));
        root.put("dynamo", dynamo(c.dynamo()));
        return (Map<String, Object>) finish(root, reveal);
    }

    private static Map<String, Object> server(ServerConfig s) {
        Map<String, Object> m = new LinkedHashMap<>();
        List<String> binds = s.bindAddresses().stream().map(BindAddress::toString).toList();
        m.put("bind_address", binds.size() == 1 ? binds.get(0) : binds);
        if (s.socketMode() != null) {
            m.put("socket_mode", Units.formatFileMode(s.socketMode()));
        }
        Map<String, Object> rest = recordTree(s);
        rest.remove("bind_addresses");
        rest.remove("socket_mode");
        m.putAll(rest);
        return m;
    }

    private static Map<String, Object> backend(BackendConfig b) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", b.name());
        m.put("type", b.type().yamlName());
        m.put("url", b.url().toString());
        m.put("models", b.models());
        m.put("role", b.role().yamlName());
        m.put("weight", b.weight());
        putIfPresent(m, "api_key", b.apiKey());
        putIfPresent(m, "timeout", b.timeout());
        m.put("enabled", b.enabled());
        m.put("internal", b.internal());
        return m;
    }

    private static Map<String, Object> rateLimiting(RateLimitingConfig r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", r.enabled());
        Map<String, Object> limits = new LinkedHashMap<>();
        putIfPresent(limits, "per_client", r.perClient());
        putIfPresent(limits, "per_backend", r.perBackend());
        putIfPresent(limits, "per_api_key", r.perApiKey());
        putIfPresent(limits, "global", r.global());
        m.put("limits", limits);
        m.put("whitelist", r.whitelist());
        m.put("bypass_keys", r.bypassKeys());
        return m;
    }

    private static Map<String, Object> apiKeys(ApiKeysConfig a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mode", a.mode().name().toLowerCase(Locale.ROOT));
        putIfPresent(m, "api_keys_file", a.apiKeysFile());
        List<Object> keys = new ArrayList<>();
        for (ApiKeyConfig k : a.inlineKeys()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("key", k.key());
            e.put("id", k.id());
            putIfPresent(e, "name", k.name());
            putIfPresent(e, "user_id", k.userId());
            putIfPresent(e, "organization_id", k.organizationId());
            e.put("scopes", k.scopes());
            putIfPresent(e, "rate_limit", k.rateLimit());
            e.put("enabled", k.enabled());
            putIfPresent(e, "expires_at", k.expiresAt());
            e.put("allowed_backends", k.allowedBackends());
            e.put("allowed_models", k.allowedModels());
            keys.add(e);
        }
        m.put("api_keys", keys);
        return m;
    }

    private static Map<String, Object> admin(AdminConfig a) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", a.enabled());
        Map<String, Object> auth = new LinkedHashMap<>();
        auth.put("method", a.method().name().toLowerCase(Locale.ROOT));
        putIfPresent(auth, "token", a.token());
        putIfPresent(auth, "username", a.username());
        putIfPresent(auth, "password", a.password());
        putIfPresent(auth, "api_key", a.apiKey());
        m.put("auth", auth);
        return m;
    }

    private Map<String, Object> dynamo(DynamoConfig d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("enabled", d.enabled());
        for (DynamoSection<?> section : sections) {
            Object value = d.sections().get(section.key());
            if (value != null) {
                m.put(section.key(), renderSection(section, value));
            }
        }
        return m;
    }

    private static <T> @Nullable Object renderSection(DynamoSection<T> section, Object value) {
        return plain(section.render(section.type().cast(value)));
    }

    private static void putIfPresent(Map<String, Object> m, String key, @Nullable Object value) {
        if (value != null) {
            m.put(key, plain(value));
        }
    }

    /**
     * The generic conversion used for core records and by {@link DynamoSection#render}'s default:
     * records become maps with snake_case keys (null components left out), enums their lower-case
     * name (or {@code yamlName()}), durations {@code 1m30s}, sizes {@code 10MiB}; {@link Secret}s are
     * kept as objects for the renderer to mask.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> recordTree(Object record) {
        Object tree = plain(record);
        if (tree instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        throw new IllegalArgumentException("value: " + record.getClass().getName() + " (expected: a record)");
    }

    private static @Nullable Object plain(@Nullable Object v) {
        if (v == null || v instanceof String || v instanceof Boolean || v instanceof Number || v instanceof Secret) {
            return v;
        }
        if (v instanceof Duration d) {
            return Units.formatDuration(d);
        }
        if (v instanceof ByteSize || v instanceof Path || v instanceof URI || v instanceof Instant
                || v instanceof BindAddress) {
            return v.toString();
        }
        if (v instanceof Enum<?> e) {
            try {
                return String.valueOf(e.getClass().getMethod("yamlName").invoke(e));
            } catch (ReflectiveOperationException | RuntimeException noYamlName) {
                return e.name().toLowerCase(Locale.ROOT);
            }
        }
        if (v instanceof Optional<?> o) {
            return plain(o.orElse(null));
        }
        if (v instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, val) -> out.put(String.valueOf(k), plain(val)));
            return out;
        }
        if (v instanceof Collection<?> c) {
            List<Object> out = new ArrayList<>();
            c.forEach(e -> out.add(plain(e)));
            return out;
        }
        if (v.getClass().isRecord()) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (RecordComponent rc : v.getClass().getRecordComponents()) {
                Object value;
                try {
                    rc.getAccessor().setAccessible(true);
                    value = rc.getAccessor().invoke(v);
                } catch (IllegalAccessException | InvocationTargetException e) {
                    throw new IllegalStateException("cannot read " + rc.getName(), e);
                }
                if (value != null) {
                    out.put(snakeCase(rc.getName()), plain(value));
                }
            }
            return out;
        }
        return v.toString();
    }

    static String snakeCase(String camel) {
        StringBuilder out = new StringBuilder();
        for (char c : camel.toCharArray()) {
            if (Character.isUpperCase(c)) {
                out.append('_').append(Character.toLowerCase(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Replaces each Secret with the mask (or its value) and copies the tree so callers may not alias it. */
    private static @Nullable Object finish(@Nullable Object v, boolean reveal) {
        if (v instanceof Secret s) {
            return reveal ? s.reveal() : Secret.MASK;
        }
        if (v instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, val) -> out.put(String.valueOf(k), finish(val, reveal)));
            return out;
        }
        if (v instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(e -> out.add(finish(e, reveal)));
            return out;
        }
        return plain(v);
    }
}
