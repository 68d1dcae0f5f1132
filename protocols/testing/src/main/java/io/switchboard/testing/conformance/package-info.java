/**
 * The shared conformance suite every protocol's test extends ({@link io.switchboard.testing.conformance.AbstractProtocolConformanceTest}).
 */
package io.switchboard.testing.conformance;
