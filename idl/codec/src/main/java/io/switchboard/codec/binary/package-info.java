/**
 * SPI for protocols and generated code: the packed binary format (readers, writers, limits) that generated {@code XxxBinaryCodec}s implement.
 */
package io.switchboard.codec.binary;
