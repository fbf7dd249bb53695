package dev.continuum.router.app;

import dev.continuum.router.core.config.ConfigException;
import dev.continuum.router.core.config.ConfigLoader;
import dev.continuum.router.core.config.ConfigOverrides;
import dev.continuum.router.core.config.ConfigSearchPath;
import dev.continuum.router.core.config.LoadResult;
import dev.continuum.router.agents.EventBrokerProcess;
import dev.continuum.router.agents.KvListenerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.Properties;

/** The {@code continuum-router} command. Exit codes: 0 success, 1 invalid config or failure, 2 usage. */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        NettyDefaults.applyUnlessSet(System.getProperties());
        LoggingSetup.bridgeJavaUtilLogging();
        int code = run(args, System.out, System.err, System.getenv());
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Runs one command; {@code serve} returns only after a shutdown has completed. */
    static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        CommandLine cli;
        try {
            cli = CommandLine.parse(args);
        } catch (CommandLine.UsageException e) {
            err.println("continuum-router: " + e.getMessage());
            err.print(CommandLine.USAGE);
            return 2;
        }
        switch (cli.command()) {
            case HELP -> {
                out.print(CommandLine.USAGE);
                return 0;
            }
            case VERSION -> {
                out.println("continuum-router " + version());
                return 0;
            }
            case GENERATE_CONFIG -> {
                out.print(GeneratedConfig.text());
                return 0;
            }
            case CONFIG_VALIDATE -> {
                return validate(loader(cli, env), out, err);
            }
            case CONFIG_SHOW -> {
                return show(loader(cli, env), out, err);
            }
            case DEMO -> {
                return Demo.run(cli, out, err, env);
            }
            case EVENT_BROKER -> {
                return EventBrokerProcess.run(java.util.Objects.requireNonNull(cli.configFile()), err, env);
            }
            case KV_LISTENER -> {
                return KvListenerProcess.run(java.util.Objects.requireNonNull(cli.configFile()), err, env);
            }
            case SERVE -> {
                try {
                    DynamoSections sections = DynamoSections.create(env);
                    RouterProcess.run(loader(cli, env, sections), sections);
                    return 0;
                } catch (ConfigException e) {
                    err.println("continuum-router: the configuration is invalid; nothing was started");
                    e.result().report().forEach(err::println);
                    return 1;
                } catch (Exception e) {
                    err.println("continuum-router: failed to start: " + e);
                    return 1;
                }
            }
        }
        throw new AssertionError(cli.command());
    }

    static ConfigLoader loader(CommandLine cli, Map<String, String> env) {
        return loader(cli, env, DynamoSections.create(env));
    }

    static ConfigLoader loader(CommandLine cli, Map<String, String> env, DynamoSections sections) {
        ConfigOverrides overrides = ConfigOverrides.none()
                .withConfigFile(cli.configFile())
                .withBindAddresses(cli.bindAddresses().isEmpty() ? null : cli.bindAddresses())
                .withLogLevel(cli.logLevel());
        return ConfigLoader.builder()
                .environment(env)
                .overrides(overrides)
                .searchPath(ConfigSearchPath.standard(env))
                .dynamoSections(sections.all())
                .strict(cli.strict())
                .build();
    }

    private static int validate(ConfigLoader loader, PrintStream out, PrintStream err) {
        LoadResult result = loader.load();
        result.report().forEach(line -> (line.startsWith("error") ? err : out).println(line));
        String where = result.source() == null ? "built-in defaults" : result.source().toString();
        if (!result.ok()) {
            err.println(where + ": invalid (" + result.errors().size() + " error(s), "
                    + result.warnings().size() + " warning(s))");
            return 1;
        }
        out.println(where + ": valid (" + result.warnings().size() + " warning(s))");
        return 0;
    }

    private static int show(ConfigLoader loader, PrintStream out, PrintStream err) {
        LoadResult result = loader.load();
        if (!result.ok()) {
            result.report().forEach(err::println);
            return 1;
        }
        result.warnings().forEach(w -> err.println("warning: " + w));
        out.print(loader.renderer().yaml(result.orThrow()));
        return 0;
    }

    static String version() {
        try (InputStream in = Main.class.getResourceAsStream("version.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
