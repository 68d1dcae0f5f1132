/**
 * Internal: the {@code zookeeper://} registry store.
 */
package io.switchboard.registry.zookeeper;
