package dev.retsu.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What runs without a container runtime: configuration and endpoint formatting. */
class RetsuContainerTest {
    /** Host and port as a started container would report them. */
    static class Mapped extends RetsuContainer {
        Mapped() { super("registry.example/retsu:0.1.0"); }
        @Override public String getHost() { return "localhost"; }
        @Override public Integer getMappedPort(int original) {
            assertEquals(PORT, original);
            return 49153;
        }
    }

    @Test
    void defaults() {
        try (RetsuContainer c = new RetsuContainer()) {
            assertEquals("retsu:latest", c.getImageName().asCanonicalNameString());
            assertEquals(List.of(9324), c.getExposedPorts());
            assertEquals("0.0.0.0", c.getEnvMap().get("RETSU_HOST"));
            assertEquals("9324", c.getEnvMap().get("RETSU_PORT"));
            assertFalse(c.getEnvMap().containsKey("RETSU_CLOCK"));
            assertEquals("us-east-1", c.getRegion());
        }
    }

    @Test
    void imageAndFrozenClockAreConfigurable() {
        try (RetsuContainer c = new RetsuContainer("retsu:0.1.0").withFrozenClock(true)) {
            assertEquals("retsu:0.1.0", c.getImageName().asCanonicalNameString());
            assertEquals("frozen", c.getEnvMap().get("RETSU_CLOCK"));
            assertTrue(c.isFrozenClock());
            c.withFrozenClock(false);
            assertFalse(c.getEnvMap().containsKey("RETSU_CLOCK"));
        }
    }

    @Test
    void endpointFromMappedHostAndPort() {
        try (Mapped c = new Mapped()) {
            assertEquals(URI.create("http://localhost:49153"), c.getEndpoint());
            assertEquals("http://localhost:49153/000000000000/jobs", c.getQueueUrl("jobs"));
        }
        assertEquals(URI.create("http://[::1]:9324"), RetsuContainer.endpointOf("::1", 9324));
    }
}
