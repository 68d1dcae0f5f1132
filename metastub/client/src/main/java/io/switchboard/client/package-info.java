/**
 * API: {@link io.switchboard.client.Switchboard}, the client's entry point (lookup through a registry, dynamic stubs, watches), {@link io.switchboard.client.DynamicStub} (calls without generated code) and {@link io.switchboard.client.ReplicatedChannel}.
 */
package io.switchboard.client;
