/**
 * Test fixtures: counting skeletons, a fault-injecting proxy, decoder checks, child JVMs, Python peers.
 */
package io.switchboard.testing;
