/**
 * The {@code switchboard-maven-plugin} goals {@code generate} and {@code generate-test}.
 */
package io.switchboard.idl.plugin;
