package io.switchboard.metastub;

/** Told of every call a meta-stub makes. Called on the caller's thread; keep it quick. */
@FunctionalInterface
public interface CallListener {
    void onCall(CallRecord record);
}
