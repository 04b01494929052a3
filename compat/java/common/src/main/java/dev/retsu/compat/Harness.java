package dev.retsu.compat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * What the Java compatibility suites share: the scenario keys and runner,
 * the results JSON of compat/run.sh's contract, assertions, and the
 * byte-exact MD5s of spec section 4.3 (checked independently of the SDK).
 */
public final class Harness {
    public static final List<String> SCENARIOS = List.of(
            "queue_lifecycle", "list_queues_pagination", "send_receive_delete_attributes",
            "batches_partial_failure", "visibility_change_release", "delay", "long_polling",
            "fifo_order_group_lock_dedup", "dead_letter_and_move_task", "tags", "errors_typed");

    /** The SNS scenario keys (an SNS results file: "service": "sns"). */
    public static final List<String> SNS_SCENARIOS = List.of(
            "sns_topic_lifecycle", "sns_fanout_envelope", "sns_raw_and_filter", "sns_fifo", "sns_errors");

    public static final String TRACE = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
    public static final String TRACE_MD5 = "5ae4d5d7636402d80f4eb6d213245a88";

    /** A scenario expectation that did not hold. */
    public static final class Fail extends RuntimeException {
        public Fail(String msg) { super(msg); }
    }

    /** Returned by a scenario the client cannot express. */
    public record NotApplicable(String reason) {}

    /** One scenario: returns a detail string, or a NotApplicable. */
    public interface Scenario { Object run() throws Exception; }

    private Harness() {}

    public static void check(boolean cond, String msg) { if (!cond) throw new Fail(msg); }

    public static void eq(Object actual, Object expected, String what) {
        if (!Objects.equals(actual, expected)) throw new Fail(what + ": expected " + expected + ", got " + actual);
    }

    public static void sleep(long ms) {
        try { Thread.sleep(Math.max(0, ms)); } catch (InterruptedException e) { throw new RuntimeException(e); }
    }

    /** Polls until cond holds or ms have passed; returns whether it held. */
    public static boolean within(long ms, BooleanSupplier cond) {
        long deadline = System.currentTimeMillis() + ms;
        while (true) {
            if (cond.getAsBoolean()) return true;
            if (System.currentTimeMillis() > deadline) return false;
            sleep(100);
        }
    }

    private static int counter;
    private static final String RUN = Long.toString(System.nanoTime() % 0xffffff, 16);

    public static String name(String stem) { return "java-" + stem + "-" + RUN + "-" + (++counter); }

    public static String md5Hex(byte[] data) {
        try {
            byte[] d = MessageDigest.getInstance("MD5").digest(data);
            StringBuilder sb = new StringBuilder();
            for (byte b : d) sb.append(String.format("%02x", b));
            return sb.toString();
        } catch (Exception e) { throw new RuntimeException(e); }
    }

    public static String md5Hex(String s) { return md5Hex(s.getBytes(StandardCharsets.UTF_8)); }

    /** One attribute for {@link #md5OfAttributes}: exactly one of string / binary is set. */
    public record Attr(String dataType, String string, byte[] binary) {
        public static Attr str(String type, String v) { return new Attr(type, v, null); }
        public static Attr bin(String type, byte[] v) { return new Attr(type, null, v); }
    }

    /** MD5OfMessageAttributes, spec section 4.3. */
    public static String md5OfAttributes(Map<String, Attr> attrs) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, Attr> e : new TreeMap<>(attrs).entrySet()) {
            put(out, e.getKey().getBytes(StandardCharsets.UTF_8));
            put(out, e.getValue().dataType().getBytes(StandardCharsets.UTF_8));
            if (e.getValue().string() != null) {
                out.write(1);
                put(out, e.getValue().string().getBytes(StandardCharsets.UTF_8));
            } else {
                out.write(2);
                put(out, e.getValue().binary());
            }
        }
        return md5Hex(out.toByteArray());
    }

    private static void put(java.io.ByteArrayOutputStream out, byte[] b) {
        out.write(b.length >>> 24); out.write(b.length >>> 16); out.write(b.length >>> 8); out.write(b.length);
        out.write(b, 0, b.length);
    }

    static {
        if (!md5OfAttributes(Map.of("Foo", Attr.str("String", "Bar"))).equals("ae7155c6026991b6d54b11589678bf9c"))
            throw new IllegalStateException("md5OfAttributes does not match the spec's vector");
    }

    /**
     * Runs every scenario in order (each isolated: an exception is that
     * scenario's failure), calls cleanup after each, and writes the results.
     * Returns the process exit status: 0 all passed, 1 some failed.
     */
    public static int run(String client, String version, String protocol, Map<String, Object> extra,
                          String out, Map<String, Scenario> scenarios, Runnable cleanup) throws IOException {
        return run(client, version, protocol, null, SCENARIOS, extra, out, scenarios, cleanup);
    }

    /** As above, for the scenario keys `names` of `service` (null: SQS, no "service" field). */
    public static int run(String client, String version, String protocol, String service, List<String> names,
                          Map<String, Object> extra, String out, Map<String, Scenario> scenarios, Runnable cleanup)
            throws IOException {
        Map<String, Map<String, String>> results = new LinkedHashMap<>();
        int failed = 0;
        for (String name : names) {
            long t0 = System.nanoTime();
            String status;
            String detail;
            Scenario s = scenarios.get(name);
            try {
                if (s == null) throw new Fail("scenario not implemented");
                Object r = s.run();
                if (r instanceof NotApplicable na) { status = "n/a"; detail = na.reason(); }
                else { status = "pass"; detail = r == null ? "" : r.toString(); }
            } catch (Fail e) {
                status = "fail"; detail = e.getMessage();
            } catch (Throwable e) {
                status = "fail"; detail = e.getClass().getSimpleName() + ": " + e.getMessage() + where(e);
            }
            if (cleanup != null) {
                try { cleanup.run(); } catch (Throwable ignored) { }
            }
            if (status.equals("fail")) failed++;
            System.out.printf("  %-34s %-5s %5.1fs  %s%n", name, status.toUpperCase(), (System.nanoTime() - t0) / 1e9,
                    status.equals("pass") ? "" : detail);
            results.put(name, Map.of("status", status, "detail", detail));
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("client", client);
        doc.put("version", version);
        doc.put("protocol", protocol);
        if (service != null) doc.put("service", service);
        doc.put("results", results);
        doc.put("extra", extra);
        Files.writeString(Path.of(out), json(doc) + "\n");
        System.out.printf("%s %s (%s): %d passed, %d failed%n", client, version, protocol, results.size() - failed, failed);
        return failed > 0 ? 1 : 0;
    }

    private static String where(Throwable e) {
        for (StackTraceElement el : e.getStackTrace()) {
            if (el.getClassName().startsWith("dev.retsu.compat") && !el.getClassName().equals(Harness.class.getName()))
                return " (at " + el.getFileName() + ":" + el.getLineNumber() + ")";
        }
        return "";
    }

    /** A minimal JSON writer for maps, lists, strings, numbers and booleans. */
    public static String json(Object v) {
        if (v == null) return "null";
        if (v instanceof String s) {
            StringBuilder sb = new StringBuilder("\"");
            for (char ch : s.toCharArray()) {
                switch (ch) {
                    case '"' -> sb.append("\\\"");
                    case '\\' -> sb.append("\\\\");
                    case '\n' -> sb.append("\\n");
                    case '\r' -> sb.append("\\r");
                    case '\t' -> sb.append("\\t");
                    default -> { if (ch < 0x20) sb.append(String.format("\\u%04x", (int) ch)); else sb.append(ch); }
                }
            }
            return sb.append('"').toString();
        }
        if (v instanceof Number || v instanceof Boolean) return v.toString();
        if (v instanceof Map<?, ?> m) {
            List<String> parts = new ArrayList<>();
            for (Map.Entry<?, ?> e : m.entrySet()) parts.add(json(e.getKey().toString()) + ": " + json(e.getValue()));
            return "{" + String.join(", ", parts) + "}";
        }
        if (v instanceof Iterable<?> it) {
            List<String> parts = new ArrayList<>();
            for (Object o : it) parts.add(json(o));
            return "[" + String.join(", ", parts) + "]";
        }
        return json(v.toString());
    }

    /** The remaining bytes of b, without consuming them. */
    public static byte[] bytes(java.nio.ByteBuffer b) {
        java.nio.ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    /** The version of the jar that holds cls (its Implementation-Version, else its file name). */
    public static String jarVersion(Class<?> cls, String fallback) {
        Package p = cls.getPackage();
        if (p != null && p.getImplementationVersion() != null) return p.getImplementationVersion();
        try {
            String path = cls.getProtectionDomain().getCodeSource().getLocation().getPath();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("-(\\d+(\\.\\d+)+)\\.jar$").matcher(path);
            if (m.find()) return m.group(1);
        } catch (Exception ignored) { }
        return fallback;
    }
}
