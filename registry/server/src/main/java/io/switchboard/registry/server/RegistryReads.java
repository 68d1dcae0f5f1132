package io.switchboard.registry.server;

import io.switchboard.registry.ComponentEntry;
import io.switchboard.registry.Entries;
import io.switchboard.registry.store.RegistryStore;
import io.switchboard.registry.wire.Entry;
import java.util.ArrayList;
import java.util.List;

/** Lookups and listings: open to every caller, answered from the store as it is now. */
final class RegistryReads {
    private final RegistryStore store;

    RegistryReads(RegistryStore store) {
        this.store = store;
    }

    /** Every instance bound under {@code name}, with its interface documents. */
    List<Entry> lookup(String name) {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.lookup(name)) {
            out.add(Entries.toWire(e));
        }
        return out;
    }

    /** Every entry, without interface documents: a listing is for finding names, a lookup fetches the schema. */
    List<Entry> list() {
        List<Entry> out = new ArrayList<>();
        for (ComponentEntry e : store.list()) {
            out.add(Entries.toWire(e.withoutSchema()));
        }
        return out;
    }
}
