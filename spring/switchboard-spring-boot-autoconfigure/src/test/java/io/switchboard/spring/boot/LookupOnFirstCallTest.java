package io.switchboard.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchboard.client.Switchboard;
import io.switchboard.components.echo.EchoComponent;
import io.switchboard.components.echo.EchoService;
import io.switchboard.components.echo.EchoStub;
import io.switchboard.registry.testing.RunningRegistry;
import org.junit.jupiter.api.Test;

/** A stub bean made before its component is bound: the lookup waits for the first call, and is tried again after a miss. */
class LookupOnFirstCallTest {
    @Test
    void aMissIsToldAndTheNextCallFindsTheComponentBoundSince() {
        try (RunningRegistry registry = RunningRegistry.start(); Switchboard sb = registry.connect()) {
            EchoStub echo = GeneratedCode.newStub(EchoStub.class,
                    new LookupOnFirstCall(sb, "Echo", GeneratedCode.descriptorOfStub(EchoStub.class)));

            assertThatThrownBy(() -> echo.echoDoubles(new double[] {1})).isInstanceOf(Switchboard.NotBoundException.class)
                    .hasMessageContaining("Echo is not bound");

            registry.serve(EchoComponent.skeleton(new EchoService()));
            assertThat(echo.echoDoubles(new double[] {1, 2})).containsExactly(1, 2);
        }
    }

    @Test
    void aStubClassWithoutItsComponentClassIsRefused() {
        assertThatThrownBy(() -> GeneratedCode.descriptorOfStub(NoComponentStub.class))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no generated Component class");
    }

    /** Named like a stub, with no {@code NoComponentComponent} beside it. */
    static final class NoComponentStub {
    }
}
