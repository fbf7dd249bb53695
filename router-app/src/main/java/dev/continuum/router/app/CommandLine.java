package dev.continuum.router.app;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The parsed command line. Grammar:
 * <pre>
 * continuum-router [serve] [--config FILE] [--bind ADDRESS]... [--log-level LEVEL]
 * continuum-router demo [--kv [--tokenizer-dir DIR]] [--bind ADDRESS]... [--log-level LEVEL]
 * continuum-router event-broker --config FILE
 * continuum-router kv-listener --config FILE
 * continuum-router config validate [--strict] [FILE | --config FILE]
 * continuum-router config show [FILE | --config FILE]
 * continuum-router --generate-config | --version | --help
 * </pre>
 * {@code --config=FILE} and {@code -c FILE} are accepted too.
 */
record CommandLine(Command command, @Nullable Path configFile, List<String> bindAddresses,
                   @Nullable String logLevel, boolean strict, boolean kv, @Nullable Path tokenizerDir) {

    enum Command {
        SERVE,
        DEMO,
        EVENT_BROKER,
        KV_LISTENER,
        CONFIG_VALIDATE,
        CONFIG_SHOW,
        GENERATE_CONFIG,
        VERSION,
        HELP
    }

    static final String USAGE = """
            Usage:
              continuum-router [serve] [--config FILE] [--bind ADDRESS]... [--log-level LEVEL]
              continuum-router demo [--kv [--tokenizer-dir DIR]] [--bind ADDRESS]... [--log-level LEVEL]
                                                a simulated Dynamo fleet (2 prefill + 2 decode workers) and the
                                                router in front of it on 127.0.0.1:8080, on an embedded config;
                                                --kv: prefix caches, kv-events and KV-aware routing (Qwen3's
                                                tokenizer.json and tokenizer_config.json from DIR)
              continuum-router event-broker --config FILE
                                                the in-cluster event broker: dials out to the router's event
                                                bus and relays the publishers its DynamoWorkerMetadata advertise
              continuum-router kv-listener --config FILE
                                                the in-cluster kv-listener: dials out to the router's event bus
                                                and relays its backends' SSE KV-event streams
              continuum-router config validate [--strict] [FILE]
                                                exit 0 when valid (warnings printed), 1 with every error;
                                                --strict: settings that have no effect are errors too
              continuum-router config show [FILE]       the effective config as YAML, secrets masked
              continuum-router --generate-config        an annotated sample config on stdout
              continuum-router --version | --help

            Options:
              -c, --config FILE     config file; otherwise ./config.yaml, ~/.config/continuum-router/config.yaml,
                                    /etc/continuum-router/config.yaml (first found), else built-in defaults
              --bind ADDRESS        listener (host:port, [v6]:port or unix:/path); repeatable; beats the file
              --log-level LEVEL     trace|debug|info|warn|error; beats RUST_LOG and the file

            Precedence: command line > environment > file > defaults.
            Signals: SIGHUP reloads the config; SIGTERM/SIGINT shut down gracefully.
            """;

    /** Thrown for a command line that cannot be understood; the message is shown with the usage. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static CommandLine parse(String... args) throws UsageException {
        Command command = null;
        Path config = null;
        List<String> binds = new ArrayList<>();
        String logLevel = null;
        boolean strict = false;
        boolean kv = false;
        Path tokenizerDir = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            String inlineValue = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                inlineValue = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            switch (arg) {
                case "-h", "--help", "help" -> command = only(command, Command.HELP);
                case "-V", "--version", "version" -> command = only(command, Command.VERSION);
                case "--generate-config" -> command = only(command, Command.GENERATE_CONFIG);
                case "serve" -> command = only(command, Command.SERVE);
                case "demo" -> command = only(command, Command.DEMO);
                case "event-broker" -> command = only(command, Command.EVENT_BROKER);
                case "kv-listener" -> command = only(command, Command.KV_LISTENER);
                case "config" -> {
                    if (i + 1 >= args.length) {
                        throw new UsageException("config: missing subcommand (expected: validate or show)");
                    }
                    String sub = args[++i];
                    command = only(command, switch (sub) {
                        case "validate", "check" -> Command.CONFIG_VALIDATE;
                        case "show" -> Command.CONFIG_SHOW;
                        default -> throw new UsageException(
                                "config " + sub + ": unknown subcommand (expected: validate or show)");
                    });
                    if (i + 1 < args.length && args[i + 1].equals("--strict")) {
                        strict = true;
                        i++;
                    }
                    if (i + 1 < args.length && !args[i + 1].startsWith("-")) {
                        config = Path.of(args[++i]);
                    }
                }
                case "--strict" -> strict = true;
                case "--kv" -> kv = true;
                case "--tokenizer-dir" -> {
                    tokenizerDir = Path.of(inlineValue != null ? inlineValue : next(arg, args, i));
                    i += inlineValue != null ? 0 : 1;
                }
                case "-c", "--config" -> {
                    config = Path.of(inlineValue != null ? inlineValue : next(arg, args, i));
                    i += inlineValue != null ? 0 : 1;
                }
                case "--bind" -> {
                    binds.add(inlineValue != null ? inlineValue : next(arg, args, i));
                    i += inlineValue != null ? 0 : 1;
                }
                case "--log-level" -> {
                    logLevel = inlineValue != null ? inlineValue : next(arg, args, i);
                    i += inlineValue != null ? 0 : 1;
                }
                default -> throw new UsageException(arg + ": unknown argument");
            }
            if (inlineValue != null && !arg.equals("--config") && !arg.equals("--bind")
                    && !arg.equals("--log-level") && !arg.equals("--tokenizer-dir")) {
                throw new UsageException(arg + ": takes no value");
            }
        }
        if (strict && command != Command.CONFIG_VALIDATE) {
            throw new UsageException("--strict: only with config validate (use server.strict_config in the file)");
        }
        if (command == Command.EVENT_BROKER && (config == null || !binds.isEmpty())) {
            throw new UsageException("event-broker: --config FILE is required (and --bind is not accepted)");
        }
        if (command == Command.KV_LISTENER && (config == null || !binds.isEmpty())) {
            throw new UsageException("kv-listener: --config FILE is required (and --bind is not accepted)");
        }
        if (command == Command.DEMO && config != null) {
            throw new UsageException("demo: --config is not accepted (the demo runs on its embedded config)");
        }
        if ((kv || tokenizerDir != null) && command != Command.DEMO) {
            throw new UsageException("--kv and --tokenizer-dir: only with demo");
        }
        if (tokenizerDir != null && !kv) {
            throw new UsageException("--tokenizer-dir: only with --kv");
        }
        return new CommandLine(command == null ? Command.SERVE : command, config, List.copyOf(binds), logLevel,
                strict, kv, tokenizerDir);
    }

    private static Command only(@Nullable Command current, Command next) throws UsageException {
        if (current != null && current != next) {
            throw new UsageException("only one command may be given (got " + name(current) + " and "
                    + name(next) + ")");
        }
        return next;
    }

    /** The argument after the flag at {@code index}. */
    private static String next(String flag, String[] args, int index) throws UsageException {
        if (index + 1 >= args.length || args[index + 1].startsWith("-")) {
            throw new UsageException(flag + ": missing value");
        }
        return args[index + 1];
    }

    private static String name(Command c) {
        return c.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ');
    }
}
