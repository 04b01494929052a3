package dev.retsu.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RetsuBinaryTest {
    private static final String RESOURCE = RetsuBinary.RESOURCE_ROOT + "linux-x86_64/retsu";

    @Test
    void platformNames() {
        assertEquals("linux-x86_64", RetsuBinary.platform("Linux", "amd64"));
        assertEquals("linux-aarch64", RetsuBinary.platform("Linux", "aarch64"));
        assertEquals("macos-aarch64", RetsuBinary.platform("Mac OS X", "aarch64"));
        assertEquals("windows-x86_64", RetsuBinary.platform("Windows 11", "amd64"));
    }

    @Test
    void bundledBinaryIsExtractedOnceAndCheckedBySha256(@TempDir Path cache) throws Exception {
        ClassLoader loader = getClass().getClassLoader();
        assertTrue(loader.getResource(RESOURCE) != null, "the build bundles " + RESOURCE);
        Path first = RetsuBinary.locate(null, "", cache, loader);
        assertTrue(Files.isExecutable(first));
        String digest = RetsuBinary.sha256(first);
        assertEquals(cache.resolve(digest).resolve("retsu"), first);
        assertEquals(first, RetsuBinary.locate(null, "", cache, loader));
        try (var files = Files.list(first.getParent())) {
            assertEquals(1, files.count(), "no temporary files left beside it");
        }

        // A damaged cached copy is replaced by a fresh extraction.
        Path other = Files.createTempDirectory(cache, "c");
        Path copy = RetsuBinary.extract(loader, RESOURCE, other);
        Files.write(copy, new byte[] {1, 2, 3});
        Files.setLastModifiedTime(copy, java.nio.file.attribute.FileTime.fromMillis(0));
        assertNotEquals(digest, RetsuBinary.sha256(copy));
        Path again = RetsuBinary.extract(loader, RESOURCE, other);
        assertEquals(copy, again);
        assertEquals(digest, RetsuBinary.sha256(again));
    }

    @Test
    void retsuBinOverridesAndIsChecked(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("my-retsu");
        Files.writeString(fake, "#!/bin/sh\n");
        fake.toFile().setExecutable(true);
        assertEquals(fake, RetsuBinary.locate(fake.toString(), "", dir, getClass().getClassLoader()));

        RetsuException e = assertThrows(RetsuException.class,
                () -> RetsuBinary.locate(dir.resolve("nope").toString(), "", dir, getClass().getClassLoader()));
        assertTrue(e.getMessage().contains("RETSU_BIN=" + dir.resolve("nope")), e.getMessage());
        assertTrue(e.getMessage().contains("missing"), e.getMessage());
    }

    @Test
    void missingPlatformNamesOsArchAndRetsuBin(@TempDir Path dir) throws Exception {
        try (URLClassLoader empty = new URLClassLoader(new URL[0], null)) {
            RetsuException e = assertThrows(RetsuException.class,
                    () -> RetsuBinary.locate(null, dir.toString(), dir, empty));
            String m = e.getMessage();
            assertTrue(m.contains("os.name=" + System.getProperty("os.name")), m);
            assertTrue(m.contains("os.arch=" + System.getProperty("os.arch")), m);
            assertTrue(m.contains("RETSU_BIN"), m);
            assertTrue(m.contains("PATH (" + dir + ")"), m);
            assertTrue(m.contains(RESOURCE), m);
        }
    }
}
