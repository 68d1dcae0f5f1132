/**
 * SPI for protocols and generated code: the XML wire form ({@link io.switchboard.codec.XmlCodec}, JAXB-based {@link io.switchboard.codec.XmlMessages}) and the graph helpers generated beans use.
 */
package io.switchboard.codec;
