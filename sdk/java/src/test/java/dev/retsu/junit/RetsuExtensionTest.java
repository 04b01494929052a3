package dev.retsu.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;

class RetsuExtensionTest {
    static final List<Retsu> SEEN = new ArrayList<>();

    @RetsuConfig(frozenClock = true)
    static class PerClass {
        @Test void a(Retsu r) { SEEN.add(r); assertTrue(r.clock().isFrozen()); }
        @Test void b(Retsu r) { SEEN.add(r); }
    }

    @RetsuConfig(perTest = true)
    static class PerTest {
        @Test void a(Retsu r) { SEEN.add(r); }
        @Test void b(Retsu r) { SEEN.add(r); }
    }

    static class Registered {
        @RegisterExtension
        static RetsuExtension ext = RetsuExtension.builder().frozenClock(true).build();

        @Test void a(Retsu r) { SEEN.add(r); assertTrue(r.clock().isFrozen()); }
        @Test void b(Retsu r) { SEEN.add(r); }
    }

    private static void run(Class<?> c) {
        SEEN.clear();
        EngineTestKit.engine("junit-jupiter").selectors(selectClass(c)).execute()
                .testEvents().assertStatistics(s -> s.started(2).succeeded(2));
    }

    @Test
    void perClassSharesOneServerAndStopsIt() {
        run(PerClass.class);
        assertEquals(SEEN.get(0), SEEN.get(1));
        assertTrue(SEEN.stream().noneMatch(Retsu::isRunning));
    }

    @Test
    void perTestGivesEachTestItsOwn() {
        run(PerTest.class);
        assertNotEquals(SEEN.get(0).endpoint(), SEEN.get(1).endpoint());
        assertTrue(SEEN.stream().noneMatch(Retsu::isRunning));
    }

    @Test
    void builderRegistration() {
        run(Registered.class);
        assertEquals(SEEN.get(0), SEEN.get(1));
        assertTrue(SEEN.stream().noneMatch(Retsu::isRunning));
    }
}
