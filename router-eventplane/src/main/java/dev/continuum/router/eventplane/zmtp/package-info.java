/**
 * A bounded ZMTP 3.x SUB client over Netty (NULL security, READY as SUB, 3.0 subscriptions) and the
 * connectors that dial publishers; every size read off the wire is checked against {@link
 * dev.continuum.router.eventplane.zmtp.ZmtpLimits} before a buffer is sized from it.
 */
@NullMarked
package dev.continuum.router.eventplane.zmtp;

import org.jspecify.annotations.NullMarked;
