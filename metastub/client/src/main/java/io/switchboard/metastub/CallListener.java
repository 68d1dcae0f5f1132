package io.switchboard.metastub;

/**
 * Told of every attempt a meta-stub makes, by its {@code CallRecordInterceptor}, when the attempt
 * ends: on the caller's thread for a blocking call, on the thread that completed the attempt for
 * an asynchronous one. Keep it quick.
 */
@FunctionalInterface
public interface CallListener {
    void onCall(CallRecord record);
}
