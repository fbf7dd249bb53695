package dev.continuum.router.sim;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A sub-command's options: the {@code --name value} pairs after the command word, in order (an option may repeat),
 * with the conversions the commands share. A name without its value, a value that does not parse and an unknown
 * name are errors naming the option.
 */
final class SimArgs {
    private SimArgs() {
    }

    /** One {@code --name value} pair. */
    record Option(String name, String value) {
        int intValue() {
            try {
                return Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw invalid("an integer");
            }
        }

        long longValue() {
            try {
                return Long.parseLong(value);
            } catch (NumberFormatException e) {
                throw invalid("an integer");
            }
        }

        double doubleValue() {
            try {
                return Double.parseDouble(value);
            } catch (NumberFormatException e) {
                throw invalid("a number");
            }
        }

        Path path() {
            return Path.of(value);
        }

        /** A duration given in (possibly fractional) milliseconds. */
        Duration millis() {
            return Duration.ofNanos(Math.round(doubleValue() * 1e6));
        }

        /** A duration given in (possibly fractional) microseconds. */
        Duration micros() {
            return Duration.ofNanos(Math.round(doubleValue() * 1e3));
        }

        boolean onOff() {
            return switch (value) {
                case "on" -> true;
                case "off" -> false;
                default -> throw invalid("on, off");
            };
        }

        /** The error for an option the command does not take. */
        IllegalArgumentException unknown() {
            return new IllegalArgumentException(name + ": unknown option");
        }

        IllegalArgumentException invalid(String expected) {
            return new IllegalArgumentException(name + ": " + value + " (expected: " + expected + ")");
        }
    }

    /** The pairs of {@code args} after {@code args[0]}, the command word. */
    static List<Option> of(String[] args) {
        List<Option> options = new ArrayList<>();
        for (int i = 1; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + ": missing value");
            }
            options.add(new Option(args[i], args[i + 1]));
        }
        return options;
    }
}
