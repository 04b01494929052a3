package dev.retsu.junit;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.ToNumberPolicy;
import com.google.gson.reflect.TypeToken;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One running Retsu server: a child process on a free loopback port, stopped by {@link #stop()}
 * (or {@link #close()}), and also when this JVM dies, even by SIGKILL (its stdin pipe closes).
 *
 * <pre>{@code
 * try (Retsu retsu = Retsu.start(RetsuOptions.builder().frozenClock(true).build())) {
 *     SqsClient sqs = SqsClient.builder().endpointOverride(retsu.endpoint()) ... .build();
 *     retsu.clock().advance(Duration.ofSeconds(31));
 * }
 * }</pre>
 */
public final class Retsu implements AutoCloseable {
    static final String READY_PREFIX = "retsu ready ";
    /** Printed before the ready line with --tls: the https endpoint and the CA file to trust. */
    static final String TLS_PREFIX = "retsu tls ";
    private static final int TAIL_LINES = 20;
    private static final Gson GSON = new GsonBuilder()
            .setObjectToNumberStrategy(ToNumberPolicy.LONG_OR_DOUBLE)
            .serializeNulls()
            .create();

    private final RetsuOptions options;
    private final Process process;
    private final OutputStream stdin;
    private final URI endpoint;
    /** Plain HTTP on the same port: where the admin API is called. */
    private final URI adminEndpoint;
    private final Path caCertificate;
    private final String region;
    private final String accountId;
    private final Deque<String> stderrTail;
    private final Thread stderrDrain;
    private final Clock clock = new Clock();
    private volatile boolean stopped;

    /** One HTTP client for every server of this JVM, made on the first admin call. */
    private static final class Http {
        static final HttpClient CLIENT = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    private Retsu(RetsuOptions options, Process process, Endpoints endpoints, Deque<String> stderrTail,
            Thread stderrDrain) {
        this.options = options;
        this.process = process;
        this.stdin = process.getOutputStream();
        this.adminEndpoint = endpoints.plain();
        this.endpoint = endpoints.https() != null ? endpoints.https() : endpoints.plain();
        this.caCertificate = endpoints.ca();
        this.stderrTail = stderrTail;
        this.stderrDrain = stderrDrain;
        this.region = options.argValue("--region", "us-east-1");
        this.accountId = options.argValue("--account-id", "000000000000");
    }

    /** Starts a server with the default options. */
    public static Retsu start() {
        return start(RetsuOptions.defaults());
    }

    /**
     * Starts a server and returns once it printed {@code retsu ready URL}.
     *
     * @throws RetsuException when no binary is found, the server exits before it is ready (bad config,
     *     port in use, ...), or it is not ready within {@link RetsuOptions#startupTimeout()}; the
     *     message holds the cause, the exit code and the last lines of its stderr
     */
    public static Retsu start(RetsuOptions options) {
        Path binary = options.binary() != null ? options.binary() : RetsuBinary.locate();
        if (!java.nio.file.Files.isRegularFile(binary) || !java.nio.file.Files.isExecutable(binary)) {
            throw new RetsuException("retsu binary " + binary + " is "
                    + (java.nio.file.Files.exists(binary) ? "not an executable file" : "missing"));
        }
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(options.commandArgs());

        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .redirectOutput(ProcessBuilder.Redirect.PIPE)
                .redirectError(ProcessBuilder.Redirect.PIPE);
        Process process;
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new RetsuException("cannot run " + binary + ": " + e.getMessage(), e);
        }

        Deque<String> tail = new ArrayDeque<>();
        Thread errDrain = daemon("retsu-stderr-" + process.pid(), () -> drain(process.getErrorStream(), line -> {
            synchronized (tail) {
                if (tail.size() == TAIL_LINES) {
                    tail.removeFirst();
                }
                tail.addLast(line);
            }
        }));
        CompletableFuture<Endpoints> ready = new CompletableFuture<>();
        Endpoints[] tls = {null};
        Thread outDrain = daemon("retsu-stdout-" + process.pid(), () -> {
            drain(process.getInputStream(), line -> {
                if (!ready.isDone() && line.startsWith(TLS_PREFIX)) {
                    String rest = line.substring(TLS_PREFIX.length()).trim();
                    int space = rest.indexOf(' ');
                    try {
                        tls[0] = space < 0
                                ? new Endpoints(null, URI.create(rest), null)
                                : new Endpoints(null, URI.create(rest.substring(0, space)),
                                        Path.of(rest.substring(space + 1)));
                    } catch (IllegalArgumentException e) {
                        ready.completeExceptionally(e);
                    }
                } else if (!ready.isDone() && line.startsWith(READY_PREFIX)) {
                    try {
                        URI plain = URI.create(line.substring(READY_PREFIX.length()).trim());
                        ready.complete(tls[0] == null ? new Endpoints(plain, null, null)
                                : new Endpoints(plain, tls[0].https(), tls[0].ca()));
                    } catch (IllegalArgumentException e) {
                        ready.completeExceptionally(e);
                    }
                }
            });
            ready.completeExceptionally(new IllegalStateException("stdout closed"));
        });
        errDrain.start();
        outDrain.start();

        Duration timeout = options.startupTimeout();
        String what = String.join(" ", command);
        try {
            Endpoints endpoints = ready.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return new Retsu(options, process, endpoints, tail, errDrain);
        } catch (TimeoutException e) {
            kill(process);
            throw failure("retsu was not ready within " + timeout.toMillis() + " ms and was killed: " + what,
                    null, process, tail, errDrain, e);
        } catch (InterruptedException e) {
            kill(process);
            Thread.currentThread().interrupt();
            throw failure("interrupted while waiting for retsu to start: " + what, null, process, tail, errDrain, e);
        } catch (ExecutionException e) {
            Integer code = null;
            try {
                if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    code = process.exitValue();
                } else {
                    kill(process);
                }
            } catch (InterruptedException ie) {
                kill(process);
                Thread.currentThread().interrupt();
            }
            String why = code == null ? "closed its stdout before it was ready"
                    : "exited with code " + code + " before it was ready";
            throw failure("retsu " + why + ": " + what, code, process, tail, errDrain, e.getCause());
        }
    }

    private static RetsuException failure(String message, Integer code, Process p, Deque<String> tail,
                                          Thread errDrain, Throwable cause) {
        try {
            errDrain.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> lines;
        synchronized (tail) {
            lines = new ArrayList<>(tail);
        }
        String reason = lines.isEmpty() ? "" : " (" + lastMeaningful(lines) + ")";
        return new RetsuException(message + reason, code, lines, cause);
    }

    /** The last stderr line that is not clap's usage boilerplate, to put the cause in the first line. */
    private static String lastMeaningful(List<String> lines) {
        for (String l : lines) {
            String t = l.trim();
            if (t.startsWith("error:") || t.startsWith("retsu:") || t.contains("cannot listen")) {
                return t;
            }
        }
        for (int i = lines.size() - 1; i >= 0; i--) {
            String t = lines.get(i).trim();
            if (!t.isEmpty()) {
                return t;
            }
        }
        return "";
    }

    private static void kill(Process p) {
        p.destroyForcibly();
        try {
            p.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private interface LineSink {
        void accept(String line);
    }

    private static void drain(InputStream in, LineSink sink) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                sink.accept(line);
            }
        } catch (IOException ignored) {
            // the process is gone
        }
    }

    private static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    // ---------------------------------------------------------------- accessors

    /** The server's plain endpoint, the https one (with --tls) and the CA file to trust. */
    private record Endpoints(URI plain, URI https, Path ca) {}

    /** The SQS endpoint, e.g. {@code http://127.0.0.1:41234} ({@code https://} with {@link RetsuOptions.Builder#tls}). */
    public URI endpoint() { return endpoint; }

    /**
     * With {@link RetsuOptions.Builder#tls}: the PEM file of the certificate authority to trust for
     * {@link #endpoint()} (for example in a trust store, or {@code AWS_CA_BUNDLE}); {@code null} otherwise.
     */
    public Path caCertificate() { return caCertificate; }

    /** The region queues are made in by default: {@code us-east-1}. */
    public String region() { return region; }

    /** The account in queue URLs and ARNs: {@code 000000000000}. */
    public String accountId() { return accountId; }

    /** {@code {endpoint}/000000000000/{name}}. */
    public String queueUrl(String name) {
        return endpoint + "/" + accountId + "/" + name;
    }

    /** The server's process id. */
    public long pid() { return process.pid(); }

    /** The options it was started with. */
    public RetsuOptions options() { return options; }

    /** Whether it is still running (not stopped and not exited). */
    public boolean isRunning() { return !stopped && process.isAlive(); }

    /** The last lines (at most 20) Retsu wrote to stderr. */
    public List<String> stderrTail() {
        synchronized (stderrTail) {
            return List.copyOf(stderrTail);
        }
    }

    /** The server's clock: freeze, advance, resume, now. */
    public Clock clock() { return clock; }

    // ---------------------------------------------------------------- admin API

    /** Every message of a queue of {@link #region()}, in every state, without changing any of them. */
    public List<Map<String, Object>> peek(String queueName) {
        return peek(queueName, "all");
    }

    /** The messages of a queue in {@code state}: available, inflight, delayed or all. */
    public List<Map<String, Object>> peek(String queueName, String state) {
        JsonObject o = call("GET", "/_retsu/queues/" + seg(region) + "/" + seg(accountId) + "/" + seg(queueName)
                + "/messages?state=" + seg(state) + "&limit=10000", null).getAsJsonObject();
        return GSON.fromJson(o.get("messages"), new TypeToken<List<Map<String, Object>>>() {}.getType());
    }

    /** A message's whole life: {@code current}, {@code events}, {@code message_id}, {@code truncated}. */
    public Map<String, Object> history(String messageId) {
        return asMap(call("GET", "/_retsu/messages/" + seg(messageId), null));
    }

    /**
     * Deletes every queue and message and forgets history, as if just started; a server started
     * with a frozen clock has its clock frozen again.
     */
    public void reset() {
        call("POST", "/_retsu/reset", null);
        if (options.frozenClock()) {
            clock.freeze();
        }
    }

    /** Empties one queue of {@link #region()}, keeping its attributes and tags. */
    public void reset(String queueName) {
        call("POST", "/_retsu/queues/" + seg(region) + "/" + seg(accountId) + "/" + seg(queueName) + "/reset", null);
    }

    /** {@code GET /_retsu/health}: version, uptime, queue count and clock. */
    public Map<String, Object> health() {
        return asMap(call("GET", "/_retsu/health", null));
    }

    /**
     * Any admin API call: {@code method} on {@code path} (starting with {@code /_retsu/}), with an
     * optional JSON body; returns the parsed answer.
     */
    public Object admin(String method, String path, Object body) {
        return GSON.fromJson(call(method, path, body == null ? null : GSON.toJsonTree(body)), Object.class);
    }

    private JsonElement call(String method, String path, JsonElement body) {
        String request = method + " " + path;
        if (!isRunning()) {
            throw new IllegalStateException("retsu at " + endpoint + " is "
                    + (stopped ? "stopped" : "no longer running (exited " + exitDescription() + ")")
                    + ": cannot " + request);
        }
        HttpRequest.Builder rb = HttpRequest.newBuilder(adminEndpoint.resolve(path))
                .timeout(Duration.ofSeconds(30))
                .header("Accept", "application/json");
        if (body != null) {
            rb.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(GSON.toJson(body)));
        } else {
            rb.method(method, "POST".equals(method) ? HttpRequest.BodyPublishers.ofString("")
                    : HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> resp;
        try {
            resp = Http.CLIENT.send(rb.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            if (!isRunning()) {
                throw new IllegalStateException("retsu at " + endpoint + " stopped during " + request, e);
            }
            throw new RetsuException(request + " to retsu at " + endpoint + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RetsuException("interrupted during " + request, e);
        }
        String text = resp.body();
        JsonElement parsed;
        try {
            parsed = text == null || text.isBlank() ? JsonParser.parseString("null") : JsonParser.parseString(text);
        } catch (JsonParseException e) {
            parsed = null;
        }
        int status = resp.statusCode();
        if (status < 200 || status > 299) {
            String code = null;
            String message = null;
            if (parsed != null && parsed.isJsonObject() && parsed.getAsJsonObject().get("error") instanceof JsonObject err) {
                code = err.has("code") ? err.get("code").getAsString() : null;
                message = err.has("message") ? err.get("message").getAsString() : null;
            }
            throw new RetsuAdminException(request, status, code, message, text);
        }
        if (parsed == null) {
            throw new RetsuException(request + " answered " + status + " with a body that is not JSON: " + text);
        }
        return parsed;
    }

    private static Map<String, Object> asMap(JsonElement e) {
        return GSON.fromJson(e, new TypeToken<Map<String, Object>>() {}.getType());
    }

    private static String seg(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private String exitDescription() {
        try {
            return Integer.toString(process.exitValue());
        } catch (IllegalThreadStateException e) {
            return "?";
        }
    }

    // ---------------------------------------------------------------- stop

    /**
     * Stops the server: closes its stdin and sends SIGTERM, waits up to 5 s, then SIGKILL.
     * Idempotent.
     */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        try {
            stdin.close();
        } catch (IOException ignored) {
            // already closed
        }
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
            stderrDrain.join(1000);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "Retsu[" + endpoint + (isRunning() ? "" : ", stopped") + "]";
    }

    /** The server's clock ({@code /_retsu/clock}). */
    public final class Clock {
        private Clock() {}

        /** Stops time; it then moves only through {@link #advance(Duration)}. */
        public Instant freeze() {
            return change("freeze", true);
        }

        /** Moves the clock forward; visibility timeouts, delays and retention expire as if that time passed. */
        public Instant advance(Duration by) {
            if (by.isNegative()) {
                throw new IllegalArgumentException("the clock only moves forward, not by " + by);
            }
            return change("advance", by.toMillis());
        }

        /** Lets time run again from where it stands. */
        public Instant resume() {
            return change("resume", true);
        }

        /** The server's current time. */
        public Instant now() {
            return instant(call("GET", "/_retsu/clock", null).getAsJsonObject());
        }

        /** Whether the clock is frozen. */
        public boolean isFrozen() {
            return call("GET", "/_retsu/clock", null).getAsJsonObject().get("frozen").getAsBoolean();
        }

        /** {@code GET /_retsu/clock}: frozen, now, now_ms, offset_ms. */
        public Map<String, Object> status() {
            return asMap(call("GET", "/_retsu/clock", null));
        }

        private Instant change(String key, Object value) {
            JsonObject body = new JsonObject();
            body.add(key, GSON.toJsonTree(value));
            return instant(call("POST", "/_retsu/clock", body).getAsJsonObject());
        }

        private Instant instant(JsonObject o) {
            JsonElement ms = o.get("now_ms");
            if (ms == null && o.get("clock") instanceof JsonObject c) {
                ms = c.get("now_ms");
            }
            return ms == null ? Instant.now() : Instant.ofEpochMilli(ms.getAsLong());
        }
    }
}
