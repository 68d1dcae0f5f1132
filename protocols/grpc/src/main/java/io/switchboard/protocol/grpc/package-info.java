/**
 * Internal: the gRPC protocol ({@code grpc}), reached through its {@code ProtocolProvider}.
 */
package io.switchboard.protocol.grpc;
