/**
 * API ({@link io.switchboard.codec.dynamic.DynamicStub}, {@link io.switchboard.codec.dynamic.DynamicRecord}, {@link io.switchboard.codec.dynamic.DynamicList}) and machinery for interfaces read at run time, without generated code.
 */
package io.switchboard.codec.dynamic;
