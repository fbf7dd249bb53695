package dev.continuum.router.kv.prompt;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Python's {@code str} methods as chat templates call them ({@code content.split('</think>')[-1].lstrip('\n')}),
 * with Python's semantics: whitespace is {@code str.isspace()}'s set (wider than Java's), {@code split()} without
 * a separator splits on runs of whitespace and drops empty strings, {@code strip(chars)} strips any of the
 * characters, {@code title()} capitalizes after every uncased character. jinjava has none of these; it would call
 * Java's {@code String} methods of the same name, where they exist, with Java's semantics.
 */
final class PyStrings {
    private PyStrings() {
    }

    /** {@code str.isspace()} for one character (Python's whitespace: Zs, and the B, S and WS bidi classes). */
    static boolean isSpace(char c) {
        return switch (c) {
            case '\t', '\n', 0x0b, 0x0c, '\r', 0x1c, 0x1d, 0x1e, 0x1f, ' ', 0x85, 0xa0, 0x1680, 0x2028, 0x2029,
                 0x202f, 0x205f, 0x3000 -> true;
            default -> c >= 0x2000 && c <= 0x200a;
        };
    }

    static String strip(String s, @Nullable String chars, boolean left, boolean right) {
        int start = 0;
        int end = s.length();
        if (left) {
            while (start < end && stripped(s.charAt(start), chars)) {
                start++;
            }
        }
        if (right) {
            while (end > start && stripped(s.charAt(end - 1), chars)) {
                end--;
            }
        }
        return s.substring(start, end);
    }

    private static boolean stripped(char c, @Nullable String chars) {
        return chars == null ? isSpace(c) : chars.indexOf(c) >= 0;
    }

    /** {@code str.split(sep, maxsplit)}; {@code sep == null} splits on whitespace runs. */
    static List<String> split(String s, @Nullable String sep, int maxSplit) {
        List<String> parts = new ArrayList<>();
        if (sep == null) {
            int i = 0;
            int n = s.length();
            int splits = 0;
            while (true) {
                while (i < n && isSpace(s.charAt(i))) {
                    i++;
                }
                if (i == n) {
                    break;
                }
                if (maxSplit >= 0 && splits == maxSplit) {
                    parts.add(strip(s.substring(i), null, false, true));
                    break;
                }
                int j = i;
                while (j < n && !isSpace(s.charAt(j))) {
                    j++;
                }
                parts.add(s.substring(i, j));
                splits++;
                i = j;
            }
            return parts;
        }
        if (sep.isEmpty()) {
            throw new TemplateFailure("split: empty separator");
        }
        int from = 0;
        int splits = 0;
        while (maxSplit < 0 || splits < maxSplit) {
            int at = s.indexOf(sep, from);
            if (at < 0) {
                break;
            }
            parts.add(s.substring(from, at));
            from = at + sep.length();
            splits++;
        }
        parts.add(s.substring(from));
        return parts;
    }

    /** {@code str.rsplit(sep, maxsplit)} for an explicit separator; without a limit it is {@code split}. */
    static List<String> rsplit(String s, @Nullable String sep, int maxSplit) {
        if (maxSplit < 0 || sep == null) {
            return split(s, sep, maxSplit);
        }
        if (sep.isEmpty()) {
            throw new TemplateFailure("rsplit: empty separator");
        }
        List<String> parts = new ArrayList<>();
        int end = s.length();
        int splits = 0;
        while (splits < maxSplit) {
            int at = s.lastIndexOf(sep, end - sep.length());
            if (at < 0) {
                break;
            }
            parts.add(0, s.substring(at + sep.length(), end));
            end = at;
            splits++;
        }
        parts.add(0, s.substring(0, end));
        return parts;
    }

    /** {@code str.replace(old, new, count)}, refusing a result longer than {@code maxChars}. */
    static String replace(String s, String old, String replacement, int count, int maxChars) {
        if (count == 0) {
            return s;
        }
        StringBuilder out = new StringBuilder(Math.min(maxChars, s.length() + 16));
        int done = 0;
        if (old.isEmpty()) {
            // Python inserts the replacement before every character and at the end.
            for (int i = 0; i <= s.length(); i++) {
                if (count < 0 || done < count) {
                    out.append(replacement);
                    done++;
                }
                if (i < s.length()) {
                    out.append(s.charAt(i));
                }
                bounded(out, maxChars);
            }
            return out.toString();
        }
        int from = 0;
        while (count < 0 || done < count) {
            int at = s.indexOf(old, from);
            if (at < 0) {
                break;
            }
            out.append(s, from, at).append(replacement);
            bounded(out, maxChars);
            from = at + old.length();
            done++;
        }
        out.append(s, from, s.length());
        bounded(out, maxChars);
        return out.toString();
    }

    private static void bounded(StringBuilder out, int maxChars) {
        if (out.length() > maxChars) {
            throw new TemplateFailure.TooLarge("string longer than " + maxChars + " characters");
        }
    }

    /** {@code str.title()}: upper-case after an uncased character, lower-case after a cased one. */
    static String title(String s) {
        StringBuilder out = new StringBuilder(s.length());
        boolean previousCased = false;
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            i += Character.charCount(cp);
            boolean cased = Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
            if (cased) {
                out.append(previousCased ? new String(Character.toChars(cp)).toLowerCase(Locale.ROOT)
                        : new String(Character.toChars(Character.toTitleCase(cp))));
            } else {
                out.appendCodePoint(cp);
            }
            previousCased = cased;
        }
        return out.toString();
    }

    /** {@code str.capitalize()}: the first character title-cased, the rest lower-cased. */
    static String capitalize(String s) {
        if (s.isEmpty()) {
            return s;
        }
        int first = s.codePointAt(0);
        int n = Character.charCount(first);
        return new String(Character.toChars(Character.toTitleCase(first))) + s.substring(n).toLowerCase(Locale.ROOT);
    }

    /** {@code sep.join(items)}; every item must be a string, as in Python. */
    static String join(String sep, Collection<?> items, int maxChars) {
        StringBuilder out = new StringBuilder();
        boolean first = true;
        for (Object item : items) {
            if (!(item instanceof CharSequence cs)) {
                throw new TemplateFailure("join: expected str instance, "
                        + (item == null ? "NoneType" : item.getClass().getSimpleName()) + " found");
            }
            if (!first) {
                out.append(sep);
            }
            first = false;
            out.append(cs);
            bounded(out, maxChars);
        }
        return out.toString();
    }

    /** {@code str.count(sub)}. */
    static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }
}
