package dev.continuum.router.eventplane.zmtp;

import java.util.ArrayList;
import java.util.List;

/** Records what a handler reports; messages are copied part by part. */
final class RecordingListener implements ZmtpListener {
    int connected;
    final List<List<byte[]>> messages = new ArrayList<>();
    final List<String> refusals = new ArrayList<>();

    @Override
    public void onConnected() {
        connected++;
    }

    @Override
    public void onMessage(ZmtpMessage message) {
        List<byte[]> parts = new ArrayList<>();
        for (int i = 0; i < message.parts(); i++) {
            byte[] part = new byte[message.length(i)];
            System.arraycopy(message.array(), message.offset(i), part, 0, part.length);
            parts.add(part);
        }
        messages.add(parts);
    }

    @Override
    public void onRefused(String reason) {
        refusals.add(reason);
    }
}
