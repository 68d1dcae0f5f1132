/**
 * Test fixtures: {@link io.switchboard.registry.testing.RunningRegistry}.
 */
package io.switchboard.registry.testing;
