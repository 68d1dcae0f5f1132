/**
 * Internal: the in-process protocol ({@code local}), reached through its {@code ProtocolProvider}.
 */
package io.switchboard.protocol.local;
