package io.switchboard.cli.scaffold;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ./switchboard new DIR --component Name [--package P]}: writes a standalone Maven project for
 * a component of one's own ({@link ComponentProject}), which builds with a plain {@code mvn package}
 * once Switchboard is in the local Maven repository.
 *
 * <pre>{@code
 * ./switchboard new ~/stats --component Stats --package org.acme.stats
 * cd ~/stats && mvn package
 * ./switchboard serve Stats --classpath ~/stats/target/stats-1.0-SNAPSHOT.jar --registry URL
 * ./switchboard new ~/stats-boot --component Stats --spring     # a Spring Boot application instead
 * }</pre>
 */
@Command(name = "new", mixinStandardHelpOptions = true,
        description = "Write a standalone Maven project for a component of your own: a pom importing "
                + "switchboard-bom, the schema (one operation, sum), the implementation, a test that calls it over "
                + "every protocol, a README. It builds with 'mvn package' once Switchboard is in the local Maven "
                + "repository ('mvn install' in this checkout).")
public final class NewCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "The project's directory: new, or empty.")
    Path dir;

    @Option(names = "--component", required = true, paramLabel = "Name",
            description = "The component's name: a capital letter, then letters and digits (Stats).")
    String component;

    @Option(names = "--package", paramLabel = "P",
            description = "The Java package of its code (default: com.example.<name in lower case>).")
    String javaPackage;

    @Option(names = "--spring", description = "Write a Spring Boot application serving the component (the "
            + "starter, a bean marked @SwitchboardComponent, a @SpringBootTest), run with 'mvn spring-boot:run'.")
    boolean spring;

    @Override
    public Integer call() throws Exception {
        ComponentProject plain = ComponentProject.of(component, javaPackage);
        ComponentProject project = spring ? plain.springBoot() : plain;
        List<Path> written = project.writeTo(dir);
        Path abs = dir.toAbsolutePath().normalize();
        System.out.println("wrote     " + abs + ": component " + project.component() + ", package "
                + project.javaPackage());
        written.forEach(f -> System.out.println("  " + f));
        System.out.println("next      cd " + abs + " && mvn package   (Switchboard must be in the local Maven "
                + "repository: 'mvn install' in the Switchboard checkout)");
        if (spring) {
            System.out.println("          mvn spring-boot:run   (against switchboard.registry.url in "
                    + "src/main/resources/application.properties)");
        } else {
            System.out.println("          ./switchboard serve " + project.component() + " --classpath "
                    + abs.resolve(project.jar()) + " --registry URL");
        }
        return 0;
    }
}
