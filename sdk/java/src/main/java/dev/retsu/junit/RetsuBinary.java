package dev.retsu.junit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds the {@code retsu} binary: {@code RETSU_BIN}, else the one bundled in this jar
 * (extracted once to {@code ~/.cache/retsu/<sha256>/retsu} and checked by its SHA-256),
 * else {@code retsu} on {@code PATH}.
 */
public final class RetsuBinary {
    /** Resource folder of the bundled binaries: {@code dev/retsu/bin/<platform>/retsu} plus {@code retsu.sha256}. */
    public static final String RESOURCE_ROOT = "dev/retsu/bin/";

    /** Files already checked in this JVM: path, size and modification time, with the digest they had. */
    private static final Map<String, String> VERIFIED = new ConcurrentHashMap<>();

    private RetsuBinary() {}

    /** The platform folder name for this JVM, e.g. {@code linux-x86_64}. */
    public static String platform() {
        return platform(System.getProperty("os.name", ""), System.getProperty("os.arch", ""));
    }

    static String platform(String osName, String osArch) {
        String n = osName.toLowerCase(Locale.ROOT);
        String os = n.startsWith("linux") ? "linux"
                : n.startsWith("mac") || n.startsWith("darwin") ? "macos"
                : n.startsWith("windows") ? "windows"
                : n.replaceAll("[^a-z0-9]+", "");
        String a = osArch.toLowerCase(Locale.ROOT);
        String arch = switch (a) {
            case "amd64", "x86_64", "x64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> a.replaceAll("[^a-z0-9_]+", "");
        };
        return os + "-" + arch;
    }

    /** The binary to run, by the lookup order above; throws {@link RetsuException} naming every place looked. */
    public static Path locate() {
        return locate(System.getenv("RETSU_BIN"), System.getenv("PATH"), cacheRoot(), RetsuBinary.class.getClassLoader());
    }

    static Path locate(String retsuBin, String pathVar, Path cacheRoot, ClassLoader loader) {
        List<String> looked = new ArrayList<>();
        if (retsuBin != null && !retsuBin.isEmpty()) {
            Path p = Paths.get(retsuBin);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
            throw new RetsuException("RETSU_BIN=" + retsuBin + " is "
                    + (Files.exists(p) ? "not an executable file" : "missing")
                    + "; unset RETSU_BIN to use the binary bundled for " + platform());
        }
        looked.add("RETSU_BIN (unset)");

        String platform = platform();
        String resource = RESOURCE_ROOT + platform + "/retsu";
        if (loader.getResource(resource) != null) {
            return extract(loader, resource, cacheRoot);
        }
        looked.add("jar resource " + resource + " (this retsu-junit5 jar bundles no binary for os.name="
                + System.getProperty("os.name") + " os.arch=" + System.getProperty("os.arch") + ")");

        if (pathVar != null) {
            for (String dir : pathVar.split(File.pathSeparator)) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path p = Paths.get(dir, "retsu");
                if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        looked.add("retsu on PATH (" + (pathVar == null ? "unset" : pathVar) + ")");
        throw new RetsuException("no retsu binary for platform " + platform + " (os.name="
                + System.getProperty("os.name") + ", os.arch=" + System.getProperty("os.arch")
                + "); looked in: " + String.join("; ", looked)
                + ". Set RETSU_BIN to the path of a retsu binary built for this machine.");
    }

    /** {@code $RETSU_CACHE_DIR}, else {@code $XDG_CACHE_HOME/retsu}, else {@code ~/.cache/retsu}. */
    static Path cacheRoot() {
        String dir = System.getenv("RETSU_CACHE_DIR");
        if (dir != null && !dir.isEmpty()) {
            return Paths.get(dir);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isEmpty()) {
            return Paths.get(xdg, "retsu");
        }
        return Paths.get(System.getProperty("user.home"), ".cache", "retsu");
    }

    /**
     * Extracts a bundled binary to {@code cacheRoot/<sha256>/retsu} unless a copy with the right
     * digest is there already; writes a temporary file beside it and renames it into place, so
     * concurrent JVMs never run a half-written file.
     */
    static Path extract(ClassLoader loader, String resource, Path cacheRoot) {
        String expected = expectedDigest(loader, resource);
        Path target = cacheRoot.resolve(expected).resolve("retsu");
        try {
            if (Files.isRegularFile(target) && Files.isExecutable(target)) {
                String key = stamp(target);
                if (expected.equals(VERIFIED.get(key))) {
                    return target;
                }
                if (expected.equals(sha256(target))) {
                    VERIFIED.put(key, expected);
                    return target;
                }
            }
            Files.createDirectories(target.getParent());
            Path tmp = Files.createTempFile(target.getParent(), "retsu-", ".part");
            try {
                MessageDigest md = sha256();
                try (InputStream in = loader.getResourceAsStream(resource);
                     OutputStream out = Files.newOutputStream(tmp)) {
                    if (in == null) {
                        throw new RetsuException("cannot read jar resource " + resource);
                    }
                    byte[] buf = new byte[1 << 16];
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        md.update(buf, 0, n);
                        out.write(buf, 0, n);
                    }
                }
                String got = HexFormat.of().formatHex(md.digest());
                if (!got.equals(expected)) {
                    throw new RetsuException("bundled " + resource + " has SHA-256 " + got + " but "
                            + resource + ".sha256 says " + expected + ": the jar is damaged");
                }
                if (!tmp.toFile().setExecutable(true, false)) {
                    throw new RetsuException("cannot make " + tmp + " executable");
                }
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(tmp);
            }
            VERIFIED.put(stamp(target), expected);
            return target;
        } catch (IOException e) {
            throw new RetsuException("cannot extract the bundled retsu binary to " + target
                    + " (set RETSU_CACHE_DIR to a writable folder, or RETSU_BIN to a binary): " + e, e);
        }
    }

    private static String stamp(Path file) throws IOException {
        return file + "|" + Files.size(file) + "|" + Files.getLastModifiedTime(file).toMillis();
    }

    private static String expectedDigest(ClassLoader loader, String resource) {
        try (InputStream in = loader.getResourceAsStream(resource + ".sha256")) {
            if (in == null) {
                throw new RetsuException("jar resource " + resource + ".sha256 is missing: the jar is damaged");
            }
            String text = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            String hex = text.split("\\s+")[0].toLowerCase(Locale.ROOT);
            if (!hex.matches("[0-9a-f]{64}")) {
                throw new RetsuException("jar resource " + resource + ".sha256 holds no SHA-256: " + text);
            }
            return hex;
        } catch (IOException e) {
            throw new RetsuException("cannot read jar resource " + resource + ".sha256: " + e, e);
        }
    }

    static String sha256(Path file) throws IOException {
        MessageDigest md = sha256();
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
