/**
 * Internal to the build: the interface compiler behind the Maven plugin.
 */
package io.switchboard.idl.compiler;
