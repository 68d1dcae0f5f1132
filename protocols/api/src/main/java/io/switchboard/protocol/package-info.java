/**
 * API: what generated code and users touch: {@link io.switchboard.protocol.Channel}, {@link io.switchboard.protocol.CallOptions}, {@link io.switchboard.protocol.Skeleton}, settings and exceptions.
 */
package io.switchboard.protocol;
