/**
 * API for hosting a registry ({@link io.switchboard.registry.server.RegistryServer}); the rest internal.
 */
package io.switchboard.registry.server;
