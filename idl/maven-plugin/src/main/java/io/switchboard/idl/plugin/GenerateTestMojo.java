package io.switchboard.idl.plugin;

import java.io.File;
import org.apache.maven.model.Resource;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

/** Compiles interface schemas into the module's test sources and resources (for test components). */
@Mojo(name = "generate-test", defaultPhase = LifecyclePhase.GENERATE_TEST_SOURCES, threadSafe = true)
public class GenerateTestMojo extends AbstractGenerateMojo {
    @Parameter(defaultValue = "${project.build.directory}/generated-test-sources/switchboard")
    File sourceDirectory;

    @Parameter(defaultValue = "${project.build.directory}/generated-test-resources/switchboard")
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
        project.addTestCompileSourceRoot(sources);
        project.addTestResource(resources);
    }
}
