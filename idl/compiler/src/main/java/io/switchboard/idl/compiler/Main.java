package io.switchboard.idl.compiler;

import io.switchboard.idl.SchemaException;
import java.nio.file.Path;

/**
 * Command-line entry: {@code java io.switchboard.idl.compiler.Main SCHEMA PACKAGE SOURCE_DIR RESOURCE_DIR [IMPLEMENTATION]};
 * with the implementation class, also the component provider that lets a server find it on the class path.
 * The Maven plugin is the usual way to run the compiler; this is for other build tools.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        if (args.length != 4 && args.length != 5) {
            System.err.println("usage: Main SCHEMA.xsd JAVA_PACKAGE SOURCE_DIR RESOURCE_DIR [IMPLEMENTATION_CLASS]");
            System.exit(2);
        }
        try {
            InterfaceCompiler.Result r = new InterfaceCompiler().compile(Path.of(args[0]), args[1], Path.of(args[2]),
                    Path.of(args[3]), args.length == 5 ? args[4] : null);
            System.out.println(r.model().componentName() + ": " + r.sources().size() + " sources, "
                    + r.resources().size() + " resources");
        } catch (SchemaException e) {
            System.err.println("error: " + e.getMessage());
            System.exit(1);
        }
    }
}
