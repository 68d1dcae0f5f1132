/**
 * API: what generated code refers to: {@link io.switchboard.idl.runtime.ServiceDescriptor} with its codec slot and published documents, operation descriptors, declared faults, n-d arrays, heterogeneous lists.
 */
package io.switchboard.idl.runtime;
