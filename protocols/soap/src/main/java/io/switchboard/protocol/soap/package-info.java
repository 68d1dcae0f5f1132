/**
 * Internal: the SOAP protocol ({@code soap}, the failsafe), reached through its {@code ProtocolProvider}.
 */
package io.switchboard.protocol.soap;
