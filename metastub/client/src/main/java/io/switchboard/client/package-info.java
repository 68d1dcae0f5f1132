/**
 * API: {@link io.switchboard.client.Switchboard}, the client's entry point (lookup through a registry, dynamic stubs, watches), and {@link io.switchboard.client.ReplicatedChannel}.
 */
package io.switchboard.client;
