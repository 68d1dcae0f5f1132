package io.switchboard.idl.plugin;

import java.io.File;

/** One interface schema and the Java package its code goes to, as written in the plugin's configuration. */
public class SchemaSpec {
    /** The interface {@code .xsd}. */
    File file;
    /** The Java package of the generated code. */
    String packageName;
    /**
     * The class that implements the component's interface (qualified, or in {@link #packageName}); when
     * set, a component provider is generated so that servers find the component on the class path.
     */
    String implementation;

    @Override
    public String toString() {
        return file + " -> " + packageName + (implementation == null ? "" : " (implementation " + implementation + ")");
    }
}
