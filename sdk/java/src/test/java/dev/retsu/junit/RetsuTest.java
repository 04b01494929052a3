package dev.retsu.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RetsuTest {
    @Test
    void startsOnAFreePortAndStops() {
        Retsu r = Retsu.start(RetsuOptions.builder().frozenClock(true).build());
        try {
            assertTrue(r.endpoint().toString().matches("http://127\\.0\\.0\\.1:\\d+"), r.endpoint().toString());
            assertEquals("us-east-1", r.region());
            assertEquals(r.endpoint() + "/000000000000/jobs", r.queueUrl("jobs"));
            assertTrue(r.clock().isFrozen());
            Instant before = r.clock().now();
            assertEquals(before.plusSeconds(90), r.clock().advance(Duration.ofSeconds(90)));
            RetsuAdminException e = assertThrows(RetsuAdminException.class, () -> r.peek("nope"));
            assertEquals(404, e.status());
            assertEquals("NotFound", e.code());
            r.reset();
            assertTrue(r.clock().isFrozen(), "reset keeps a frozen-clock server frozen");
        } finally {
            r.stop();
        }
        assertFalse(r.isRunning());
        r.stop(); // idempotent
        IllegalStateException s = assertThrows(IllegalStateException.class,
                () -> r.clock().advance(Duration.ofSeconds(1)));
        assertTrue(s.getMessage().contains("stopped"), s.getMessage());
    }

    @Test
    void tlsServesHttpsBesidePlainHttp(@TempDir Path dir) throws Exception {
        Retsu r = Retsu.start(RetsuOptions.builder().tls(true).dataDir(dir).build());
        try {
            assertTrue(r.endpoint().toString().matches("https://127\\.0\\.0\\.1:\\d+"), r.endpoint().toString());
            assertEquals(dir.resolve("tls").resolve("ca.pem"), r.caCertificate());
            // A client trusting the CA file: CreateQueue over TLS answers an https queue URL.
            java.security.KeyStore trust = java.security.KeyStore.getInstance(java.security.KeyStore.getDefaultType());
            trust.load(null, null);
            try (var in = Files.newInputStream(r.caCertificate())) {
                trust.setCertificateEntry("retsu",
                        java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            var tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            var ssl = javax.net.ssl.SSLContext.getInstance("TLS");
            ssl.init(null, tmf.getTrustManagers(), null);
            var client = java.net.http.HttpClient.newBuilder().sslContext(ssl).build();
            var answer = client.send(java.net.http.HttpRequest.newBuilder(r.endpoint().resolve("/"))
                            .header("Content-Type", "application/x-www-form-urlencoded")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("Action=CreateQueue&QueueName=sealed"))
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, answer.statusCode(), answer.body());
            assertTrue(answer.body().contains("<QueueUrl>" + r.queueUrl("sealed") + "</QueueUrl>"), answer.body());
            // The admin API keeps working (plain HTTP on the same port).
            assertTrue(r.peek("sealed").isEmpty());
        } finally {
            r.stop();
        }
    }

    @Test
    void badConfigFailsWithExitCodeAndStderr(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("bad.toml");
        Files.writeString(cfg, "bad = [\n");
        RetsuException e = assertThrows(RetsuException.class,
                () -> Retsu.start(RetsuOptions.builder().config(cfg).build()));
        assertEquals(2, e.exitCode().orElse(-1), e.getMessage());
        assertTrue(e.getMessage().contains("unclosed array"), e.getMessage());
    }

    @Test
    void startupTimeoutKillsAndFails(@TempDir Path dir) throws Exception {
        Path slow = dir.resolve("slow-retsu");
        Files.writeString(slow, "#!/bin/sh\necho starting >&2\nexec sleep 30\n");
        slow.toFile().setExecutable(true);
        long t0 = System.nanoTime();
        RetsuException e = assertThrows(RetsuException.class, () -> Retsu.start(RetsuOptions.builder()
                .binary(slow).startupTimeout(Duration.ofMillis(500)).build()));
        assertTrue(System.nanoTime() - t0 < 5_000_000_000L);
        assertTrue(e.getMessage().contains("not ready within 500 ms"), e.getMessage());
        assertTrue(e.stderrTail().contains("starting"), e.getMessage());
    }

    @Test
    void argValueFindsRegion() {
        RetsuOptions o = RetsuOptions.builder().args("--region", "eu-west-1", "--account-id=123456789012").build();
        assertEquals("eu-west-1", o.argValue("--region", "us-east-1"));
        assertEquals("123456789012", o.argValue("--account-id", "000000000000"));
        assertEquals(java.util.List.of("--host", "127.0.0.1", "--port", "0", "--exit-on-stdin-close",
                "--region", "eu-west-1", "--account-id=123456789012"), o.commandArgs());
    }
}
