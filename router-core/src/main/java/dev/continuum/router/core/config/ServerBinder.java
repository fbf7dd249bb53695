package dev.continuum.router.core.config;

import dev.continuum.router.core.net.IpLiterals;
import dev.continuum.router.core.config.internal.Units;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Binds {@code server}. */
final class ServerBinder {
    static final String BIND_EXPECTATION = "host:port, [ipv6]:port or unix:/absolute/path";
    private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]{0,252})?");
    private static final Pattern PORT = Pattern.compile("\\d{1,5}");

    private ServerBinder() {
    }

    static ServerConfig bind(ConfigNode n) {
        ServerConfig d = ServerConfig.defaults();
        List<BindAddress> binds = bindAddresses(n.get("bind_address"), d.bindAddresses());
        ConfigNode modeNode = n.get("socket_mode");
        Integer socketMode = modeNode.isPresent()
                ? modeNode.asChoice(-1, Units::parseFileMode, Units.FILE_MODE_EXPECTATION)
                : null;
        if (socketMode != null && socketMode < 0) {
            socketMode = null;
        }
        if (socketMode != null && binds.stream().noneMatch(b -> b instanceof BindAddress.Unix)) {
            modeNode.warning("applies only to unix: entries of server.bind_address; ignored");
        }
        ByteSize maxBody = positiveSize(n.get("max_request_body_size"), d.maxRequestBodySize());
        Duration grace = n.get("shutdown_grace_period").asDuration(d.shutdownGracePeriod());
        return new ServerConfig(
                binds,
                socketMode,
                n.get("workers").asInt(d.workers(), 0, Integer.MAX_VALUE),
                n.get("connection_pool_size").asInt(d.connectionPoolSize(), 1, Integer.MAX_VALUE),
                maxBody,
                positiveSize(n.get("max_header_size"), d.maxHeaderSize()),
                positiveSize(n.get("max_initial_line_length"), d.maxInitialLineLength()),
                n.get("request_timeout").asPositiveDuration(d.requestTimeout()),
                n.get("connect_timeout").asPositiveDuration(d.connectTimeout()),
                n.get("header_read_timeout").asPositiveDuration(d.headerReadTimeout()),
                n.get("idle_timeout").asPositiveDuration(d.idleTimeout()),
                grace,
                n.get("body_read_timeout").asPositiveDuration(d.bodyReadTimeout()),
                bufferedRequestSize(n.get("max_buffered_request_size"), maxBody),
                n.get("max_connections").asInt(d.maxConnections(), 1, Integer.MAX_VALUE),
                quietPeriod(n.get("shutdown_quiet_period"), grace));
    }

    /** Absent: derived from the direct-memory limit at start (null). Below one maximal body, no body could fit. */
    private static @Nullable ByteSize bufferedRequestSize(ConfigNode node, ByteSize maxBody) {
        if (!node.isPresent()) {
            return null;
        }
        ByteSize size = node.asByteSize(maxBody);
        if (size.bytes() < maxBody.bytes()) {
            node.invalid("at least server.max_request_body_size (" + maxBody + ")");
            return null;
        }
        return size;
    }

    private static Duration quietPeriod(ConfigNode node, Duration grace) {
        Duration fallback = ServerConfig.defaultQuietPeriod(grace);
        Duration quiet = node.asDuration(fallback);
        if (quiet.compareTo(grace) > 0) {
            node.invalid("at most server.shutdown_grace_period (" + grace.toSeconds() + "s): the quiet period is part of it");
            return fallback;
        }
        return quiet;
    }

    private static ByteSize positiveSize(ConfigNode node, ByteSize defaultValue) {
        ByteSize size = node.asByteSize(defaultValue);
        if (size.bytes() == 0) {
            node.invalid("a size > 0");
            return defaultValue;
        }
        return size;
    }

    /** A string or a list of strings; every entry parsed, duplicates refused. */
    static List<BindAddress> bindAddresses(ConfigNode node, List<BindAddress> defaults) {
        if (!node.isPresent()) {
            return defaults;
        }
        if (node.kind() == ConfigNode.Kind.MAP) {
            node.invalid("a string or a list of strings");
            return defaults;
        }
        List<ConfigNode> entries = node.kind() == ConfigNode.Kind.SCALAR ? List.of(node) : node.elements();
        if (entries.isEmpty()) {
            node.error("[] (expected: at least one address)");
            return defaults;
        }
        List<BindAddress> out = new ArrayList<>();
        Map<BindAddress, String> seen = new LinkedHashMap<>();
        for (ConfigNode entry : entries) {
            String text = entry.asStringOrNull();
            if (text == null) {
                continue;
            }
            BindAddress parsed = parseBindAddress(entry, text.trim());
            if (parsed == null) {
                continue;
            }
            String first = seen.putIfAbsent(parsed, entry.path());
            if (first != null) {
                entry.invalid("each address once; same as " + first);
                continue;
            }
            out.add(parsed);
        }
        return out.isEmpty() ? defaults : out;
    }

    private static @Nullable BindAddress parseBindAddress(ConfigNode entry, String text) {
        if (text.regionMatches(true, 0, "unix:", 0, 5)) {
            String rest = text.substring(5);
            try {
                Path p = Path.of(rest);
                if (!rest.startsWith("/") || !p.isAbsolute() || p.getFileName() == null) {
                    entry.invalid("unix: followed by an absolute socket path");
                    return null;
                }
                return new BindAddress.Unix(p.normalize());
            } catch (InvalidPathException e) {
                entry.invalid("unix: followed by an absolute socket path");
                return null;
            }
        }
        String host;
        String port;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0 || close + 1 >= text.length() || text.charAt(close + 1) != ':') {
                entry.invalid(BIND_EXPECTATION);
                return null;
            }
            host = text.substring(1, close);
            port = text.substring(close + 2);
            if (!IpLiterals.isIpv6(host)) {
                entry.invalid(BIND_EXPECTATION);
                return null;
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon <= 0 || text.indexOf(':') != colon) {
                entry.invalid(BIND_EXPECTATION);
                return null;
            }
            host = text.substring(0, colon);
            port = text.substring(colon + 1);
            if (!IpLiterals.isIpv4(host) && !HOST_NAME.matcher(host).matches()) {
                entry.invalid(BIND_EXPECTATION);
                return null;
            }
        }
        if (!PORT.matcher(port).matches()) {
            entry.invalid(BIND_EXPECTATION);
            return null;
        }
        int p = Integer.parseInt(port);
        if (p > 65535) {
            entry.invalid("a port in 0..65535");
            return null;
        }
        return new BindAddress.Tcp(host.toLowerCase(Locale.ROOT), p);
    }
}
