/**
 * SPI: what a registry store implements ({@link io.switchboard.registry.store.RegistryStore}, {@link io.switchboard.registry.store.RegistryStoreProvider}), opened by name through {@link io.switchboard.registry.store.RegistryStores}.
 */
package io.switchboard.registry.store;
