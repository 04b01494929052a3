package dev.retsu.junit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * How to start a Retsu server: {@code RetsuOptions.builder().frozenClock(true).build()}.
 *
 * <p>The server is always started as {@code retsu --host 127.0.0.1 --port 0
 * --exit-on-stdin-close [--clock frozen] [--data-dir DIR] [--config FILE] [args...]}.
 */
public final class RetsuOptions {
    /** Default start-up wait: the server must print its ready line within this. */
    public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(10);

    private final boolean frozenClock;
    private final List<String> args;
    private final Path dataDir;
    private final Path config;
    private final int port;
    private final Duration startupTimeout;
    private final Path binary;
    private final boolean tls;

    private RetsuOptions(Builder b) {
        this.tls = b.tls;
        this.frozenClock = b.frozenClock;
        this.args = List.copyOf(b.args);
        this.dataDir = b.dataDir;
        this.config = b.config;
        this.port = b.port;
        this.startupTimeout = b.startupTimeout;
        this.binary = b.binary;
    }

    /** The defaults: running clock, in-memory storage, a free port, 10 s start-up wait. */
    public static RetsuOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.frozenClock = frozenClock;
        b.args.addAll(args);
        b.dataDir = dataDir;
        b.config = config;
        b.port = port;
        b.startupTimeout = startupTimeout;
        b.binary = binary;
        b.tls = tls;
        return b;
    }

    public boolean frozenClock() { return frozenClock; }
    public List<String> args() { return args; }
    public Path dataDir() { return dataDir; }
    public Path config() { return config; }
    public int port() { return port; }
    public Duration startupTimeout() { return startupTimeout; }
    public Path binary() { return binary; }
    public boolean tls() { return tls; }

    /** The command line after the binary's path. */
    List<String> commandArgs() {
        List<String> cmd = new ArrayList<>();
        cmd.add("--host");
        cmd.add("127.0.0.1");
        if (!hasArg("--port")) { // a --port among the extra args wins over port()
            cmd.add("--port");
            cmd.add(Integer.toString(port));
        }
        cmd.add("--exit-on-stdin-close");
        if (frozenClock) {
            cmd.add("--clock");
            cmd.add("frozen");
        }
        if (dataDir != null) {
            cmd.add("--data-dir");
            cmd.add(dataDir.toString());
        }
        if (config != null) {
            cmd.add("--config");
            cmd.add(config.toString());
        }
        if (tls && !hasArg("--tls")) {
            cmd.add("--tls");
        }
        cmd.addAll(args);
        return cmd;
    }

    private boolean hasArg(String flag) {
        return args.stream().anyMatch(a -> a.equals(flag) || a.startsWith(flag + "="));
    }

    /** The value given to a flag among the extra args ({@code --region x} or {@code --region=x}), or {@code fallback}. */
    String argValue(String flag, String fallback) {
        String found = fallback;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals(flag) && i + 1 < args.size()) {
                found = args.get(++i);
            } else if (a.startsWith(flag + "=")) {
                found = a.substring(flag.length() + 1);
            }
        }
        return found;
    }

    @Override
    public String toString() {
        return "RetsuOptions" + commandArgs() + (binary == null ? "" : " binary=" + binary)
                + " startupTimeout=" + startupTimeout;
    }

    /** Builds {@link RetsuOptions}. */
    public static final class Builder {
        private boolean frozenClock;
        private final List<String> args = new ArrayList<>();
        private Path dataDir;
        private Path config;
        private int port;
        private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;
        private boolean tls;
        private Path binary;

        private Builder() {}

        /** Start with the clock frozen ({@code --clock frozen}): it moves only through {@link Retsu#clock()}. */
        public Builder frozenClock(boolean frozen) { this.frozenClock = frozen; return this; }

        /**
         * Extra command-line arguments, appended after the wrapper's own (e.g. {@code --strict-timing});
         * a {@code --port} here replaces the wrapper's {@code --port 0}.
         */
        public Builder args(String... extra) { return args(Arrays.asList(extra)); }

        public Builder args(List<String> extra) {
            for (String a : extra) {
                args.add(Objects.requireNonNull(a, "argument"));
            }
            return this;
        }

        /** Keep queues and messages on disk in this folder ({@code --data-dir}); in memory when unset. */
        public Builder dataDir(Path dir) { this.dataDir = dir; return this; }

        /** A Retsu TOML configuration file ({@code --config}). */
        public Builder config(Path file) { this.config = file; return this; }

        /** Listen on this port; 0 (the default) lets the OS choose a free one, which Retsu then reports. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535, not " + port);
            }
            this.port = port;
            return this;
        }

        /** How long to wait for the ready line before killing the server and failing (default 10 s). */
        public Builder startupTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("startupTimeout must be positive, not " + timeout);
            }
            this.startupTimeout = timeout;
            return this;
        }

        /** Use this binary instead of looking one up (RETSU_BIN, the bundled one, PATH). */
        public Builder binary(Path binary) { this.binary = binary; return this; }

        /**
         * Answer TLS too ({@code --tls}): {@link Retsu#endpoint()} is then {@code https://...} and
         * {@link Retsu#caCertificate()} the certificate authority to trust (kept in the data directory,
         * else Retsu's per-user directory). Plain HTTP keeps answering on the same port.
         */
        public Builder tls(boolean tls) { this.tls = tls; return this; }

        public RetsuOptions build() { return new RetsuOptions(this); }
    }
}
