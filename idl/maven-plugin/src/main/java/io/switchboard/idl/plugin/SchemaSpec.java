package io.switchboard.idl.plugin;

import java.io.File;

/** One interface schema and the Java package its code goes to, as written in the plugin's configuration. */
public class SchemaSpec {
    /** The interface {@code .xsd}. */
    File file;
    /** The Java package of the generated code. */
    String packageName;

    @Override
    public String toString() {
        return file + " -> " + packageName;
    }
}
