/**
 * API: what generated code and users touch: {@link io.switchboard.protocol.Channel}, {@link io.switchboard.protocol.CallOptions}, {@link io.switchboard.protocol.Skeleton}, the server's {@link io.switchboard.protocol.ServerInterceptor} chain, settings and exceptions.
 */
package io.switchboard.protocol;
