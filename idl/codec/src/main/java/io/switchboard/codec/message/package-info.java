/**
 * SPI for protocols and generated code: what every codec and protocol shares about a message,
 * whatever form it travels in. The refusal ({@link io.switchboard.codec.message.WireFormatException}),
 * the limits a reader holds a message to ({@link io.switchboard.codec.message.MessageLimits}), the
 * numbering of its linked nodes ({@link io.switchboard.codec.message.IdentityIndex}), and the checks
 * every protocol makes before it sends one ({@link io.switchboard.codec.message.MessageChecks},
 * {@link io.switchboard.codec.message.SendChecks}).
 */
package io.switchboard.codec.message;
