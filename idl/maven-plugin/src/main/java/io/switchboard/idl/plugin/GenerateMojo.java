package io.switchboard.idl.plugin;

import java.io.File;
import org.apache.maven.model.Resource;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/**
 * Compiles interface schemas into the module's main sources and resources.
 *
 * <pre>{@code
 * <plugin>
 *   <groupId>io.switchboard</groupId>
 *   <artifactId>switchboard-maven-plugin</artifactId>
 *   <executions><execution><goals><goal>generate</goal></goals></execution></executions>
 *   <configuration>
 *     <schemas>
 *       <schema>
 *         <file>src/main/xsd/echo.xsd</file>
 *         <packageName>com.example.echo</packageName>
 *         <!-- optional: servers find the component on the class path (./switchboard serve Echo) -->
 *         <implementation>com.example.echo.EchoService</implementation>
 *       </schema>
 *     </schemas>
 *   </configuration>
 * </plugin>
 * }</pre>
 */
@Mojo(name = "generate", defaultPhase = LifecyclePhase.GENERATE_SOURCES, threadSafe = true)
public class GenerateMojo extends AbstractGenerateMojo {
    @Parameter(defaultValue = "${project.build.directory}/generated-sources/switchboard")
    File sourceDirectory;

    @Parameter(defaultValue = "${project.build.directory}/generated-resources/switchboard")
    File resourceDirectory;

    @Override
    File sourceDir() {
        return sourceDirectory;
    }

    @Override
    File resourceDir() {
        return resourceDirectory;
    }

    @Override
    void addToBuild(String sources, Resource resources) {
        project.addCompileSourceRoot(sources);
        project.addResource(resources);
    }
}
