package io.switchboard.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.switchboard.protocol.Skeleton;
import io.switchboard.testing.conformance.ConformanceComponent;
import io.switchboard.testing.conformance.ConformanceImpl;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ComponentProvidersTest {
    /** Found through this module's test META-INF/services, as a generated provider is through its jar's. */
    public static final class ConformanceFixtureProvider implements ComponentProvider {
        @Override
        public String name() {
            return "ConformanceFixture";
        }

        @Override
        public Skeleton create(ComponentContext context) {
            return ConformanceComponent.skeleton(ComponentProviders.instantiate(ConformanceImpl.class, context));
        }
    }

    /** Two components whose names differ only in case: a name cannot pick one. */
    public static class TwinProvider implements ComponentProvider {
        @Override
        public String name() {
            return "Twin";
        }

        @Override
        public Skeleton create(ComponentContext context) {
            throw new AssertionError("never created");
        }
    }

    public static final class UpperTwinProvider extends TwinProvider {
        @Override
        public String name() {
            return "TWIN";
        }
    }

    @Test
    void findsAComponentByItsNameWhateverTheCaseAndHyphens() {
        ComponentProvider exact = ComponentProviders.find("ConformanceFixture");
        assertSame(exact, ComponentProviders.find("conformancefixture"));
        assertSame(exact, ComponentProviders.find("conformance-fixture"));
        assertSame(exact, ComponentProviders.find("CONFORMANCE_FIXTURE"));
        Skeleton skeleton = exact.create(ComponentContext.standalone());
        assertEquals("Conformance", skeleton.descriptor().name());
        assertEquals(List.of("ConformanceFixture", "TWIN", "Twin"), List.copyOf(ComponentProviders.all().keySet()));
    }

    @Test
    void anUnknownNameListsTheComponentsFound() {
        NoSuchElementException e = assertThrows(NoSuchElementException.class, () -> ComponentProviders.find("Stats"));
        assertTrue(e.getMessage().contains("'Stats'") && e.getMessage().contains("ConformanceFixture, TWIN, Twin"),
                e.getMessage());
    }

    @Test
    void aNameMatchingTwoComponentsIsRefusedNamingBoth() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ComponentProviders.find("twin"));
        assertTrue(e.getMessage().contains("Twin (") && e.getMessage().contains("TWIN ("), e.getMessage());
    }

    public static final class TakesContext {
        final ComponentContext context;

        public TakesContext() {
            throw new AssertionError("the constructor with a context is preferred");
        }

        public TakesContext(ComponentContext context) {
            this.context = context;
        }
    }

    public static final class NoArguments {
    }

    public static final class NeedsSomethingElse {
        public NeedsSomethingElse(String registryUrl) {
        }
    }

    public static final class Fails {
        public Fails() {
            throw new IllegalStateException("no licence");
        }
    }

    public abstract static class Abstract {
    }

    @Test
    void instantiatePrefersTheConstructorTakingTheContextThenTheNoArgumentOne() {
        AtomicInteger stops = new AtomicInteger();
        ComponentContext context = ComponentContext.of("http://127.0.0.1:1/axis2/services/Registry", "s", stops::incrementAndGet);
        TakesContext made = ComponentProviders.instantiate(TakesContext.class, context);
        assertSame(context, made.context);
        made.context.stopServing();
        assertEquals(1, stops.get(), "the host's stop action ran");
        assertEquals(NoArguments.class, ComponentProviders.instantiate(NoArguments.class, context).getClass());
    }

    @Test
    void instantiateSaysWhatAClassLacks() {
        IllegalStateException none = assertThrows(IllegalStateException.class,
                () -> ComponentProviders.instantiate(NeedsSomethingElse.class, ComponentContext.standalone()));
        assertTrue(none.getMessage().contains("NeedsSomethingElse(ComponentContext) or NeedsSomethingElse()"),
                none.getMessage());
        IllegalStateException failed = assertThrows(IllegalStateException.class,
                () -> ComponentProviders.instantiate(Fails.class, ComponentContext.standalone()));
        assertEquals("no licence", failed.getCause().getMessage());
        assertThrows(IllegalStateException.class,
                () -> ComponentProviders.instantiate(Abstract.class, ComponentContext.standalone()));
    }

    @Test
    void aStandaloneContextCannotStopItsHost() {
        ComponentContext standalone = ComponentContext.standalone();
        assertEquals(null, standalone.registryUrl());
        assertTrue(!standalone.canStopServing());
        assertThrows(UnsupportedOperationException.class, standalone::stopServing);
        assertEquals(null, standalone.clientSettings().tls(), "no TLS unless the host gives it");
    }

    @Test
    void aContextPassesTheHostsClientSettingsOn() {
        io.switchboard.protocol.ClientSettings hosts = io.switchboard.protocol.ClientSettings.defaults()
                .withCallTimeout(java.time.Duration.ofSeconds(7));   // TLS in a real host; identity is what counts
        ComponentContext context = ComponentContext.of("https://127.0.0.1:1/axis2/services/Registry", null, null, hosts);
        assertSame(hosts, context.clientSettings());
        assertEquals(null, ComponentContext.of("http://h:1/", null, null).clientSettings().tls());
    }

    @Test
    void aNamedContextNamesItsComponentAsTheCallerAndKeepsTheHostsSettings() {
        io.switchboard.protocol.ClientSettings hosts = io.switchboard.protocol.ClientSettings.defaults()
                .withCallTimeout(java.time.Duration.ofSeconds(7));
        ComponentContext named = ComponentContext.of("http://h:1/", "s", null, hosts).named("Stats");
        assertEquals("Stats", named.clientSettings().callerName());
        assertEquals(java.time.Duration.ofSeconds(7), named.clientSettings().callTimeout());
        assertEquals("s", named.registrySecret());
        assertEquals(null, hosts.callerName(), "the host's own settings are not changed");
    }
}
