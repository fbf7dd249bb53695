package dev.continuum.router.discovery.config;

import dev.continuum.router.core.config.ConfigNode;
import dev.continuum.router.discovery.DynamoSnapshot;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The namespace rule every discovery source shares: one name ({@code namespace}, default {@code dynamo}), or a
 * list of up to {@link DiscoverySection#MAX_DYNAMO_NAMESPACES} unique names in its place (a non-default single
 * name beside the list is an error). The sources differ only in the key names and in what a valid name is.
 *
 * @param one     the single name (the default when the YAML leaves it out)
 * @param several the list; empty when the YAML leaves it out
 */
record NamespaceList(String one, List<String> several) {
    static final String NAMESPACE_RULE = "a non-empty name without '/', whitespace or control characters";

    NamespaceList {
        several = List.copyOf(several);
    }

    /** The namespaces watched: the list, else the single name. */
    List<String> effective() {
        return several.isEmpty() ? List.of(one) : several;
    }

    /** etcd and the file store: {@code namespace} / {@code namespaces}, names as Dynamo's key paths allow. */
    static NamespaceList bindStoreKeys(ConfigNode parent) {
        return bind(parent, "namespace", "namespaces", NamespaceList::validNamespace, NAMESPACE_RULE);
    }

    static NamespaceList bind(ConfigNode parent, String oneKey, String listKey, Predicate<String> valid,
                              String rule) {
        ConfigNode oneNode = parent.get(oneKey);
        String one = oneNode.asString(DynamoSnapshot.DEFAULT_NAMESPACE);
        if (oneNode.kind() == ConfigNode.Kind.SCALAR && !valid.test(one)) {
            oneNode.invalid(rule);
        }
        ConfigNode listNode = parent.get(listKey);
        List<String> several = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        List<ConfigNode> elements = listNode.elements();
        if (elements.size() > DiscoverySection.MAX_DYNAMO_NAMESPACES) {
            listNode.error(elements.size() + " namespaces (expected: at most " + DiscoverySection.MAX_DYNAMO_NAMESPACES
                    + ", MAX_DYNAMO_NAMESPACES)");
        }
        for (ConfigNode element : elements) {
            String name = element.asStringOrNull();
            if (name == null || !valid.test(name)) {
                element.invalid(rule);
            } else if (!seen.add(name)) {
                element.invalid("unique namespaces");
            } else {
                several.add(name);
            }
        }
        if (!several.isEmpty() && oneNode.isPresent() && !one.equals(DynamoSnapshot.DEFAULT_NAMESPACE)) {
            oneNode.invalid("either " + oneKey + " or " + listKey + ", not both (a non-default " + oneKey
                    + " excludes the list)");
        }
        return new NamespaceList(one, several);
    }

    static boolean validNamespace(String name) {
        return !name.isEmpty() && name.chars().noneMatch(c -> c == '/' || Character.isWhitespace(c)
                || Character.isISOControl(c) || Character.isSpaceChar(c));
    }
}
