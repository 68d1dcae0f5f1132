/**
 * SPI: what a protocol implements ({@link io.switchboard.protocol.spi.ProtocolProvider}) and the machinery protocols share; {@link io.switchboard.protocol.spi.NamedProviders} loads every extension point by name.
 */
package io.switchboard.protocol.spi;
