package dev.continuum.router.core.config;

import dev.continuum.router.core.config.internal.TreeNode;
import dev.continuum.router.core.config.internal.YamlTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Binds {@code api_keys}, reading {@code api_keys_file} relative to the config file's directory. */
final class ApiKeysBinder {
    static final String SCOPES = "one of read, write, files, admin";
    static final String RATE_LIMIT_EXPECTATION =
            "requests per minute as an integer, or {requests_per_second, burst_capacity}";
    static final String EXPIRES_EXPECTATION = "an RFC 3339 timestamp such as 2027-01-01T00:00:00Z";

    private ApiKeysBinder() {
    }

    static ApiKeysConfig bind(ConfigNode n, BindContext ctx) {
        ApiKeysConfig.Mode mode = n.get("mode").asChoice(ApiKeysConfig.Mode.PERMISSIVE, ApiKeysBinder::mode,
                "permissive or blocking");
        List<ConfigNode> entries = new ArrayList<>(entryList(n.get("api_keys")));
        int inline = entries.size();
        Path file = null;
        ConfigNode fileNode = n.get("api_keys_file");
        String fileText = fileNode.asPathString();
        if (fileText != null && !fileText.isBlank()) {
            file = resolve(fileNode, fileText.trim(), ctx.baseDir);
            if (file != null) {
                entries.addAll(readFile(fileNode, file, ctx));
            }
        }
        List<ApiKeyConfig> keys = new ArrayList<>();
        int fileKeys = 0;
        Map<String, String> ids = new HashMap<>();
        // Key values are compared in memory only; messages name the ids, never the value.
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < entries.size(); i++) {
            ConfigNode e = entries.get(i);
            ApiKeyConfig key = entry(e, i, ctx);
            if (key == null) {
                continue;
            }
            String firstId = ids.putIfAbsent(key.id(), e.path());
            if (firstId != null) {
                e.get("id").invalid("a unique id; also used by " + firstId);
            }
            String sameValue = values.putIfAbsent(key.key().reveal(), key.id());
            if (sameValue != null) {
                e.get("key").error(Secret.MASK + " (expected: a unique key value; ids \"" + sameValue + "\" and \""
                        + key.id() + "\" share one)");
            }
            keys.add(key);
            if (i >= inline) {
                fileKeys++; // file entries follow the inline ones, so they stay a suffix of keys
            }
        }
        ApiKeysConfig config = new ApiKeysConfig(mode, file, keys, fileKeys);
        if (mode == ApiKeysConfig.Mode.BLOCKING) {
            Instant now = ctx.clock.instant();
            if (keys.stream().noneMatch(k -> k.usableAt(now))) {
                n.warning("blocking mode with no usable key; every /v1 request will get 401");
            }
        }
        return config;
    }

    private static List<ConfigNode> entryList(ConfigNode list) {
        if (list.kind() == ConfigNode.Kind.SCALAR || list.kind() == ConfigNode.Kind.MAP) {
            list.invalid("a list of keys");
            return List.of();
        }
        return list.elements();
    }

    private static @Nullable Path resolve(ConfigNode node, String text, Path baseDir) {
        try {
            Path p = Path.of(text);
            return (p.isAbsolute() ? p : baseDir.resolve(p)).normalize();
        } catch (InvalidPathException e) {
            node.invalid("a file path");
            return null;
        }
    }

    /** A list of key entries, or a map holding one under {@code api_keys}. */
    private static List<ConfigNode> readFile(ConfigNode fileNode, Path file, BindContext ctx) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            fileNode.invalid("a readable YAML file; not found");
            return List.of();
        } catch (IOException e) {
            fileNode.invalid("a readable YAML file; " + e.getClass().getSimpleName());
            return List.of();
        }
        String root = "api_keys.api_keys_file";
        TreeNode tree = YamlTrees.parse(text, String.valueOf(file.getFileName()), root, ctx.tree);
        if (tree == null) {
            return List.of();
        }
        ctx.extraRoots.add(tree);
        if (tree.kind() == ConfigNode.Kind.LIST) {
            return tree.elements();
        }
        if (tree.kind() == ConfigNode.Kind.MAP && tree.keys().isEmpty()) {
            return List.of(); // an empty file holds no key
        }
        if (tree.kind() == ConfigNode.Kind.MAP) {
            return entryList(tree.get("api_keys"));
        }
        tree.invalid("a list of keys, or a map with api_keys: [...]");
        return List.of();
    }

    private static @Nullable ApiKeyConfig entry(ConfigNode e, int index, BindContext ctx) {
        if (e.kind() != ConfigNode.Kind.MAP) {
            e.invalid("a map with key and id");
            return null;
        }
        ConfigNode keyNode = e.get("key");
        Secret key = keyNode.asSecret();
        boolean usable = true;
        if (!keyNode.isPresent()) {
            keyNode.invalid("a non-empty key");
            usable = false;
        } else if (key != null && key.reveal().isEmpty()) {
            keyNode.error("\"\" (expected: a non-empty key)");
            usable = false;
        } else if (key == null) {
            usable = false;
        }
        ConfigNode idNode = e.get("id");
        String id = idNode.asString("key-" + index);
        if (id.isBlank()) {
            idNode.invalid("a non-empty id");
            id = "key-" + index;
        }
        String name = e.get("name").asStringOrNull();
        String userId = e.get("user_id").asStringOrNull();
        String organizationId = e.get("organization_id").asStringOrNull();
        List<String> scopes = new ArrayList<>();
        ConfigNode scopesNode = e.get("scopes");
        if (scopesNode.kind() == ConfigNode.Kind.SCALAR || scopesNode.kind() == ConfigNode.Kind.MAP) {
            scopesNode.invalid("a list, each " + SCOPES);
        } else {
            for (ConfigNode s : scopesNode.elements()) {
                String scope = s.asChoice("", ApiKeysBinder::scope, SCOPES);
                if (!scope.isEmpty() && !scopes.contains(scope)) {
                    scopes.add(scope);
                }
            }
        }
        RateLimit rateLimit = rateLimit(e.get("rate_limit"));
        boolean enabled = e.get("enabled").asBool(true);
        Instant expiresAt = expiresAt(e.get("expires_at"), ctx);
        List<String> allowedBackends = BackendsBinder.uniqueStrings(e.get("allowed_backends"), "a backend name");
        ConfigNode allowedNode = e.get("allowed_backends");
        List<ConfigNode> allowedElements = allowedNode.kind() == ConfigNode.Kind.LIST ? allowedNode.elements() : List.of();
        for (ConfigNode ref : allowedElements) {
            String s = ref.scalar();
            if (s != null && !s.isBlank()) {
                ctx.backendReferences.add(new BindContext.BackendReference(ref, s));
            }
        }
        List<String> allowedModels = BackendsBinder.uniqueStrings(e.get("allowed_models"), "a non-empty model id");
        if (!usable || key == null) {
            return null;
        }
        return new ApiKeyConfig(key, id, name, userId, organizationId, scopes, allowedBackends, allowedModels,
                rateLimit, enabled, expiresAt);
    }

    private static @Nullable RateLimit rateLimit(ConfigNode n) {
        if (!n.isPresent()) {
            return null;
        }
        if (n.kind() == ConfigNode.Kind.MAP) {
            return PolicyBinders.tier(n);
        }
        if (n.kind() == ConfigNode.Kind.LIST) {
            n.invalid(RATE_LIMIT_EXPECTATION);
            return null;
        }
        int perMinute = n.asChoice(-1, ApiKeysBinder::positiveInt, RATE_LIMIT_EXPECTATION);
        return perMinute > 0 ? RateLimit.perMinute(perMinute) : null;
    }

    private static @Nullable Integer positiveInt(String s) {
        try {
            int v = Integer.parseInt(s);
            return v >= 1 ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static @Nullable Instant expiresAt(ConfigNode n, BindContext ctx) {
        if (!n.isPresent()) {
            return null;
        }
        Instant at = n.asChoice(Instant.MIN, ApiKeysBinder::rfc3339, EXPIRES_EXPECTATION);
        if (at.equals(Instant.MIN)) {
            return null;
        }
        if (!at.isAfter(ctx.clock.instant())) {
            n.warning(at + " is in the past; this key is refused");
        }
        return at;
    }

    static @Nullable Instant rfc3339(String s) {
        try {
            return OffsetDateTime.parse(s.toUpperCase(Locale.ROOT)).toInstant();
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static ApiKeysConfig.@Nullable Mode mode(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "permissive" -> ApiKeysConfig.Mode.PERMISSIVE;
            case "blocking" -> ApiKeysConfig.Mode.BLOCKING;
            default -> null;
        };
    }

    private static @Nullable String scope(String s) {
        String v = s.toLowerCase(Locale.ROOT);
        return switch (v) {
            case "read", "write", "files", "admin" -> v;
            default -> null;
        };
    }
}
