/**
 * API ({@link io.switchboard.codec.dynamic.DynamicRecord}, {@link io.switchboard.codec.dynamic.DynamicList}) and machinery for interfaces read at run time, without generated code; the stub that calls through them is {@code io.switchboard.client.DynamicStub}, in switchboard-client.
 */
package io.switchboard.codec.dynamic;
