/**
 * Load from code: {@link io.switchboard.client.load.LoadRun} calls an operation from many callers
 * through any stub and counts what happened in a {@link io.switchboard.client.load.LoadTally}. The
 * engine of {@code ./switchboard load}. API.
 */
package io.switchboard.client.load;
