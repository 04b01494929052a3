package dev.retsu.junit;

/** The admin API answered a non-2xx status; carries its JSON error code and message. */
public class RetsuAdminException extends RetsuException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String errorMessage;

    public RetsuAdminException(String request, int status, String code, String errorMessage, String body) {
        super(request + " answered " + status + (code == null ? "" : " " + code) + ": "
                + (errorMessage == null ? body : errorMessage));
        this.status = status;
        this.code = code;
        this.errorMessage = errorMessage;
    }

    /** The HTTP status (404, 400, 401, 409, ...). */
    public int status() { return status; }

    /** The admin API's error code: NotFound, BadRequest, Unauthorized, Conflict; null if the body had none. */
    public String code() { return code; }

    /** The admin API's error message; null if the body had none. */
    public String errorMessage() { return errorMessage; }
}
