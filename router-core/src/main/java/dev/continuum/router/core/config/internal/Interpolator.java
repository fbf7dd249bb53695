package dev.continuum.router.core.config.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * {@code ${VAR}}, {@code ${VAR:-default}} (default when unset or empty), {@code ${VAR-default}} (default
 * only when unset) and {@code $$} for a literal {@code $}, as docker compose reads them. Any other
 * {@code $} stays as written, so a password holding a lone {@code $} survives. Defaults are literal text.
 */
public final class Interpolator {
    public static final String EXPECTATION = "${VAR}, ${VAR:-default} or $$ for a literal $";
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /**
     * @param unset variables referenced without a default that were not set (substituted with "")
     * @param error the offending raw text when the syntax is wrong; the value is then unusable
     */
    public record Result(String value, List<String> unset, @Nullable String error) {
    }

    private Interpolator() {
    }

    public static boolean mayInterpolate(String text) {
        return text.indexOf('$') >= 0;
    }

    public static Result apply(String text, Map<String, String> env) {
        if (!mayInterpolate(text)) {
            return new Result(text, List.of(), null);
        }
        StringBuilder out = new StringBuilder(text.length());
        List<String> unset = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            char c = text.charAt(i);
            if (c != '$' || i + 1 >= text.length()) {
                out.append(c);
                i++;
                continue;
            }
            char next = text.charAt(i + 1);
            if (next == '$') {
                out.append('$');
                i += 2;
                continue;
            }
            if (next != '{') {
                out.append(c);
                i++;
                continue;
            }
            int close = text.indexOf('}', i + 2);
            if (close < 0) {
                return new Result("", List.of(), text);
            }
            String body = text.substring(i + 2, close);
            String name = body;
            String fallback = null;
            boolean fallbackWhenEmpty = false;
            int colonDash = body.indexOf(":-");
            int dash = body.indexOf('-');
            if (colonDash >= 0 && (dash < 0 || colonDash < dash)) {
                name = body.substring(0, colonDash);
                fallback = body.substring(colonDash + 2);
                fallbackWhenEmpty = true;
            } else if (dash >= 0) {
                name = body.substring(0, dash);
                fallback = body.substring(dash + 1);
            }
            if (!NAME.matcher(name).matches()) {
                return new Result("", List.of(), text);
            }
            String value = env.get(name);
            if (value == null || (fallbackWhenEmpty && value.isEmpty())) {
                if (fallback != null) {
                    value = fallback;
                } else {
                    unset.add(name);
                    value = "";
                }
            }
            out.append(value);
            i = close + 1;
        }
        return new Result(out.toString(), List.copyOf(unset), null);
    }
}
