/**
 * API. The interface model: an interface XML Schema read by {@link io.switchboard.idl.SchemaReader} (no DTDs, no imports, a size limit) into {@link io.switchboard.idl.InterfaceModel}. No run-time dependencies.
 */
package io.switchboard.idl;
