/**
 * Internal: the {@code file:PATH} registry store.
 */
package io.switchboard.registry.file;
