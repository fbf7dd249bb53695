package dev.continuum.router.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Captures what one logger (and its children) logs while open, for tests that assert a line is logged
 * once, or never. Use in try-with-resources.
 */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Level previousLevel;

    private LogCapture(String loggerName, Level level) {
        this.logger = (Logger) LoggerFactory.getLogger(loggerName);
        this.previousLevel = logger.getLevel();
        logger.setLevel(level);
        appender.start();
        logger.addAppender(appender);
    }

    /** Captures {@code loggerName} (a class or package name) at DEBUG and above. */
    public static LogCapture of(String loggerName) {
        return new LogCapture(loggerName, Level.DEBUG);
    }

    public static LogCapture of(Class<?> type) {
        return of(type.getName());
    }

    /** Formatted messages at {@code level}, in order. (AppenderBase appends under the appender's monitor.) */
    public List<String> messages(Level level) {
        synchronized (appender) {
            return appender.list.stream().filter(e -> e.getLevel() == level)
                    .map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    public List<String> warnings() {
        return messages(Level.WARN);
    }

    /** Formatted messages at any level. */
    public List<String> all() {
        synchronized (appender) {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    public void clear() {
        synchronized (appender) {
            appender.list.clear();
        }
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setLevel(previousLevel);
        appender.stop();
    }
}
