/**
 * SPI for the interface compiler and interfaces read at run time: the WSDL and {@code .proto} a
 * component publishes, written from its interface model ({@link io.switchboard.codec.documents.InterfaceDocuments}).
 */
package io.switchboard.codec.documents;
