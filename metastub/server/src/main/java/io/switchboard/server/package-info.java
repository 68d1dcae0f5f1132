/**
 * API: {@link io.switchboard.server.ComponentServer} serves components on every protocol on the class path and keeps their registry entries leased; callbacks.
 */
package io.switchboard.server;
