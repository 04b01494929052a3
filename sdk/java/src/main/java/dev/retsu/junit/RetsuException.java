package dev.retsu.junit;

import java.util.List;
import java.util.OptionalInt;

/**
 * Retsu could not be found, could not start, or its admin API refused a call.
 * Carries the server's exit code (when it exited) and the last lines of its stderr.
 */
public class RetsuException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Integer exitCode;
    private final List<String> stderrTail;

    public RetsuException(String message) {
        this(message, null, List.of(), null);
    }

    public RetsuException(String message, Throwable cause) {
        this(message, null, List.of(), cause);
    }

    public RetsuException(String message, Integer exitCode, List<String> stderrTail, Throwable cause) {
        super(withTail(message, stderrTail), cause);
        this.exitCode = exitCode;
        this.stderrTail = List.copyOf(stderrTail);
    }

    /** The server's exit status, when it had exited. */
    public OptionalInt exitCode() {
        return exitCode == null ? OptionalInt.empty() : OptionalInt.of(exitCode);
    }

    /** The last lines the server wrote to stderr (at most 20). */
    public List<String> stderrTail() {
        return stderrTail;
    }

    private static String withTail(String message, List<String> tail) {
        if (tail == null || tail.isEmpty()) {
            return message;
        }
        StringBuilder sb = new StringBuilder(message).append("\n--- last lines of retsu's stderr ---");
        for (String line : tail) {
            sb.append('\n').append(line);
        }
        return sb.toString();
    }
}
