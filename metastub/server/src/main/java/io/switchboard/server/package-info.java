/**
 * API: {@link io.switchboard.server.ComponentServer} serves components on every protocol on the class path and keeps their registry entries leased; {@link io.switchboard.server.DynamicSkeleton} serves one from its schema alone, with a {@link io.switchboard.server.DynamicHandler}; callbacks; {@link io.switchboard.server.ComponentProviders} finds components on the class path. SPI: {@link io.switchboard.server.ComponentProvider}, which the interface compiler generates per component.
 */
package io.switchboard.server;
