/**
 * kv-events as Dynamo workers publish them: the bounded decoding of one {@code kv-events} message into
 * {@code RouterEvent}s, and {@link dev.continuum.router.kv.events.KvEventIngest}, the entry point the KV
 * supervisor's subscriptions hand their messages to. See {@code docs/kv-routing.md}.
 */
@NullMarked
package dev.continuum.router.kv.events;

import org.jspecify.annotations.NullMarked;
