package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.retsu.junit.Retsu;
import dev.retsu.junit.RetsuException;
import dev.retsu.junit.RetsuOptions;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input: each raises the fixture's error with the cause and retsu's stderr; nothing hangs. */
class ErrorsTest {
    @Test
    void badConfigFile(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("retsu.toml");
        Files.writeString(cfg, "[[queue]]\nname = \n");
        RetsuException e = assertThrows(RetsuException.class,
                () -> Retsu.start(RetsuOptions.builder().config(cfg).build()));
        assertEquals(2, e.exitCode().orElse(-1), e.getMessage());
        assertTrue(e.getMessage().contains("exited with code 2 before it was ready"), e.getMessage());
        assertTrue(e.stderrTail().stream().anyMatch(l -> l.contains(cfg.toString())), e.getMessage());
    }

    @Test
    void portInUseViaExtraArgs() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            RetsuException e = assertThrows(RetsuException.class,
                    () -> Retsu.start(RetsuOptions.builder().args("--port", Integer.toString(port)).build()));
            assertEquals(1, e.exitCode().orElse(-1), e.getMessage());
            assertTrue(e.getMessage().contains("cannot listen on 127.0.0.1:" + port), e.getMessage());
        }
    }

    @Test
    void stoppedServerAskedToAdvanceItsClock() {
        Retsu retsu = Retsu.start(RetsuOptions.builder().frozenClock(true).build());
        retsu.stop();
        assertFalse(retsu.isRunning());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> retsu.clock().advance(Duration.ofSeconds(30)));
        assertTrue(e.getMessage().contains("is stopped"), e.getMessage());
        retsu.stop(); // stopping twice is fine
    }

    @Test
    void missingBinary(@TempDir Path dir) {
        Path nowhere = dir.resolve("no-such-retsu");
        RetsuException e = assertThrows(RetsuException.class,
                () -> Retsu.start(RetsuOptions.builder().binary(nowhere).build()));
        assertTrue(e.getMessage().contains(nowhere + " is missing"), e.getMessage());
    }

    @Test
    void binaryThatExitsAtStart(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("retsu");
        Files.writeString(fake, "#!/bin/sh\necho 'boom: no storage' >&2\nexit 3\n");
        assertTrue(fake.toFile().setExecutable(true));
        RetsuException e = assertThrows(RetsuException.class,
                () -> Retsu.start(RetsuOptions.builder().binary(fake).build()));
        assertEquals(3, e.exitCode().orElse(-1));
        assertTrue(e.getMessage().contains("boom: no storage"), e.getMessage());
    }

    @Test
    void startupTimeoutKillsTheServer(@TempDir Path dir) throws Exception {
        Path slow = dir.resolve("retsu");
        Files.writeString(slow, "#!/bin/sh\necho 'waiting for nothing' >&2\nexec sleep 60\n");
        assertTrue(slow.toFile().setExecutable(true));
        long t0 = System.nanoTime();
        RetsuException e = assertThrows(RetsuException.class, () -> Retsu.start(
                RetsuOptions.builder().binary(slow).startupTimeout(Duration.ofMillis(300)).build()));
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "did not hang");
        assertTrue(e.getMessage().contains("not ready within 300 ms"), e.getMessage());
        assertTrue(e.getMessage().contains("waiting for nothing"), e.getMessage());
    }
}
