/**
 * API: {@link io.switchboard.metastub.MetaStub}, the channel that picks the protocol of each call, its policies and call records; SPI: {@link io.switchboard.metastub.SelectionPolicyProvider}.
 */
package io.switchboard.metastub;
