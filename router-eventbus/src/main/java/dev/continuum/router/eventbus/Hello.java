package dev.continuum.router.eventbus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.continuum.router.eventbus.config.BrokerEntry;
import dev.continuum.router.eventbus.config.BusRole;
import dev.continuum.router.eventbus.config.EventBusSection;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A validated {@code hello} (docs/event-bus-protocol.md, section 4.2).
 *
 * @param role       what the client says it is
 * @param clientId   its client ID
 * @param namespaces Dynamo namespaces a broker reaches
 * @param backends   backends a kv_listener announces
 */
public record Hello(BusRole role, String clientId, List<String> namespaces, List<String> backends) {
    public Hello {
        namespaces = List.copyOf(namespaces);
        backends = List.copyOf(backends);
    }

    /** A refusal found while reading or checking the message. */
    public record Refusal(BusErrorCode code, String message) {
    }

    /** Either a hello or why not. */
    public record Checked(@Nullable Hello hello, @Nullable Refusal refusal) {
    }

    private static Checked refuse(BusErrorCode code, String message) {
        return new Checked(null, new Refusal(code, message));
    }

    /** Reads {@code message} and checks it against the entry the request authenticated as, at {@code version}. */
    public static Checked check(ObjectNode message, BrokerEntry entry, int version) {
        if (!"hello".equals(text(message.get("type")))) {
            return refuse(BusErrorCode.INVALID_MESSAGE, "the first message must be hello");
        }
        String roleText = text(message.get("role"));
        BusRole role = roleText == null ? null : BusRole.fromLabel(roleText).orElse(null);
        if (role == null || !role.label().equals(roleText)) {
            return refuse(BusErrorCode.INVALID_MESSAGE, "role: expected broker or kv_listener");
        }
        String clientId = text(message.get("client_id"));
        if (clientId == null || !EventBusSection.CLIENT_ID.matcher(clientId).matches()) {
            return refuse(BusErrorCode.INVALID_MESSAGE, "client_id: expected 1..128 characters of A-Z a-z 0-9 . _ -");
        }
        JsonNode versions = message.get("versions");
        if (versions == null || !versions.isArray() || versions.isEmpty() || versions.size() > BusProtocol.MAX_VERSIONS) {
            return refuse(BusErrorCode.INVALID_MESSAGE, "versions: expected 1..16 integers");
        }
        boolean offersVersion = false;
        for (JsonNode v : versions) {
            if (!v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < 1) {
                return refuse(BusErrorCode.INVALID_MESSAGE, "versions: expected integers >= 1");
            }
            offersVersion |= v.intValue() == version;
        }
        if (!offersVersion) {
            return refuse(BusErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                    "versions does not list the request's continuum-bus-version " + version);
        }
        List<String> namespaces = names(message.get("dynamo_namespaces"), EventBusSection.MAX_NAMESPACES, true);
        List<String> backends = sources(message.get("sources"));
        if (namespaces == null) {
            return refuse(BusErrorCode.INVALID_MESSAGE,
                    "dynamo_namespaces: expected up to 16 distinct names of A-Z a-z 0-9 . _ - (1..63)");
        }
        if (backends == null) {
            return refuse(BusErrorCode.INVALID_MESSAGE,
                    "sources: expected up to 64 distinct objects {\"backend\": \"<1..128 bytes>\"}");
        }
        if (role != entry.role()) {
            return refuse(BusErrorCode.FORBIDDEN, "role: this credential's role is " + entry.role().label());
        }
        if (!clientId.equals(entry.clientId())) {
            return refuse(BusErrorCode.FORBIDDEN, "client_id: not the client_id configured for this credential");
        }
        if (role == BusRole.BROKER) {
            if (!backends.isEmpty()) {
                return refuse(BusErrorCode.FORBIDDEN, "sources: a broker announces no sources");
            }
            if (namespaces.isEmpty()) {
                return refuse(BusErrorCode.INVALID_MESSAGE, "dynamo_namespaces: a broker declares at least one");
            }
            for (int i = 0; i < namespaces.size(); i++) {
                if (!entry.allowsNamespace(namespaces.get(i))) {
                    return refuse(BusErrorCode.FORBIDDEN, "dynamo_namespaces[" + i + "]: \"" + namespaces.get(i)
                            + "\" is not granted to this credential");
                }
            }
        } else {
            if (!namespaces.isEmpty()) {
                return refuse(BusErrorCode.FORBIDDEN, "dynamo_namespaces: a kv_listener declares none");
            }
            if (backends.isEmpty()) {
                return refuse(BusErrorCode.INVALID_MESSAGE, "sources: a kv_listener announces at least one");
            }
            for (int i = 0; i < backends.size(); i++) {
                if (!entry.backends().contains(backends.get(i))) {
                    return refuse(BusErrorCode.FORBIDDEN, "sources[" + i + "].backend: \"" + backends.get(i)
                            + "\" is not granted to this credential");
                }
            }
        }
        return new Checked(new Hello(role, clientId, namespaces, backends), null);
    }

    public static @Nullable String text(@Nullable JsonNode node) {
        return node != null && node.isTextual() ? node.textValue() : null;
    }

    private static @Nullable List<String> names(@Nullable JsonNode node, int max, boolean namespace) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray() || node.size() > max) {
            return null;
        }
        Set<String> out = new LinkedHashSet<>();
        for (JsonNode element : node) {
            String name = text(element);
            if (name == null || (namespace && !EventBusSection.NAMESPACE.matcher(name).matches()) || !out.add(name)) {
                return null;
            }
        }
        return new ArrayList<>(out);
    }

    private static @Nullable List<String> sources(@Nullable JsonNode node) {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray() || node.size() > BusProtocol.MAX_SOURCES) {
            return null;
        }
        Set<String> out = new LinkedHashSet<>();
        for (JsonNode element : node) {
            String backend = element.isObject() ? text(element.get("backend")) : null;
            if (backend == null || backend.isEmpty() || backend.length() > 128 || !out.add(backend)) {
                return null;
            }
        }
        return new ArrayList<>(out);
    }
}
