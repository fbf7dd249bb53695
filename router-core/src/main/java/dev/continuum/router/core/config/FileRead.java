package dev.continuum.router.core.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * One bounded read of a file: its bytes, or why they could not be read. Two reads are equal when
 * they saw the same bytes (or failed the same way), which is how a reload tells a finished file from
 * one still being written.
 *
 * @param path    the file as given
 * @param content the bytes read (read-only), or null when the read failed
 * @param failure why the read failed ({@code not found}, {@code larger than 4 MiB}, an exception's
 *                simple name), or "" when it succeeded
 */
record FileRead(Path path, @Nullable ByteBuffer content, String failure) {
    /** A config file is a few KiB; the bound keeps a runaway file from being loaded into memory. */
    static final int MAX_BYTES = 4 * 1024 * 1024;

    FileRead {
        content = content == null ? null : content.asReadOnlyBuffer();
    }

    static FileRead of(Path path) {
        try (InputStream in = Files.newInputStream(path)) {
            // One byte past the bound tells "exactly at the bound" from "larger"; the size is not
            // trusted beforehand because the file may grow while it is read.
            byte[] bytes = in.readNBytes(MAX_BYTES + 1);
            if (bytes.length > MAX_BYTES) {
                return new FileRead(path, null, "larger than " + (MAX_BYTES >> 20) + " MiB");
            }
            return new FileRead(path, ByteBuffer.wrap(bytes), "");
        } catch (NoSuchFileException e) {
            return new FileRead(path, null, "not found");
        } catch (IOException e) {
            return new FileRead(path, null, e.getClass().getSimpleName());
        }
    }

    boolean ok() {
        return content != null;
    }

    /** A copy of the bytes read; empty when the read failed. */
    byte[] bytes() {
        if (content == null) {
            return new byte[0];
        }
        byte[] copy = new byte[content.remaining()];
        content.duplicate().get(copy);
        return copy;
    }

    @Override
    public String toString() {
        return "FileRead[" + path + ", " + (content == null ? failure : content.remaining() + " bytes") + "]";
    }
}
