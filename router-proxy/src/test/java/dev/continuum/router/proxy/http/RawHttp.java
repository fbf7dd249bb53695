package dev.continuum.router.proxy.http;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** Hand-written HTTP/1.1 over a plain socket, for what the JDK client will not send. */
final class RawHttp {
    private RawHttp() {
    }

    /** Sends {@code request} and reads until the server closes (or {@code timeoutMillis} of silence). */
    static String exchange(int port, String request, int timeoutMillis) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(timeoutMillis);
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return readAll(s.getInputStream());
        }
    }

    static String readAll(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] b = new byte[8192];
        try {
            int n;
            while ((n = in.read(b)) >= 0) {
                buf.write(b, 0, n);
            }
        } catch (SocketTimeoutException e) {
            // silence: return what arrived
        } catch (IOException e) {
            if (buf.size() == 0) {
                throw e;
            }
        }
        return buf.toString(StandardCharsets.ISO_8859_1);
    }

    /** Reads one response with a {@code Content-Length} body from a kept-alive connection. */
    static String readResponse(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
            if ((b = in.read()) < 0) {
                throw new EOFException("connection closed after " + head.size() + " bytes of a head");
            }
            head.write(b);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)\r\ncontent-length: *(\\d+)").matcher(h);
        if (!m.find()) {
            throw new IOException("no content-length in " + h);
        }
        byte[] body = in.readNBytes(Integer.parseInt(m.group(1)));
        return h + new String(body, StandardCharsets.ISO_8859_1);
    }
}
