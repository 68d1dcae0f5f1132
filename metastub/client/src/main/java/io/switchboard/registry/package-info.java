/**
 * API: the registry client ({@link io.switchboard.registry.RegistryClient}), entries and watches.
 */
package io.switchboard.registry;
