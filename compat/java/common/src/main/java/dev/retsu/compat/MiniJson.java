package dev.retsu.compat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (objects to LinkedHashMap, arrays to ArrayList,
 * strings, numbers as Double, booleans, null), so the SNS suites can read
 * the envelope SNS delivers independently of any SDK's JSON code. Throws
 * IllegalArgumentException on anything that is not one JSON value.
 */
public final class MiniJson {
    private final String s;
    private int i;

    public MiniJson(String s) { this.s = s; }

    /** The whole text as one value. */
    public Object value() {
        Object v = read();
        ws();
        if (i != s.length()) throw bad("trailing text");
        return v;
    }

    private IllegalArgumentException bad(String what) { return new IllegalArgumentException(what + " at offset " + i); }

    private void ws() { while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++; }

    private char peek() {
        if (i >= s.length()) throw bad("unexpected end");
        return s.charAt(i);
    }

    private void expect(char c) {
        if (peek() != c) throw bad("expected '" + c + "'");
        i++;
    }

    private Object read() {
        ws();
        char c = peek();
        switch (c) {
            case '{': {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (peek() == '}') { i++; return m; }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    if (m.put(k, read()) != null) throw bad("duplicate key " + k);
                    ws();
                    if (peek() == ',') { i++; continue; }
                    expect('}');
                    return m;
                }
            }
            case '[': {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (peek() == ']') { i++; return l; }
                while (true) {
                    l.add(read());
                    ws();
                    if (peek() == ',') { i++; continue; }
                    expect(']');
                    return l;
                }
            }
            case '"': return string();
            case 't': return word("true", Boolean.TRUE);
            case 'f': return word("false", Boolean.FALSE);
            case 'n': return word("null", null);
            default: return number();
        }
    }

    private Object word(String w, Object v) {
        if (!s.startsWith(w, i)) throw bad("bad literal");
        i += w.length();
        return v;
    }

    private Double number() {
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
        if (start == i) throw bad("unexpected '" + peek() + "'");
        try { return Double.valueOf(s.substring(start, i)); } catch (NumberFormatException e) { throw bad("bad number"); }
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = peek();
            i++;
            if (c == '"') return sb.toString();
            if (c < 0x20) throw bad("control character in a string");
            if (c != '\\') { sb.append(c); continue; }
            char e = peek();
            i++;
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (i + 4 > s.length()) throw bad("short \\u escape");
                    try { sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); } catch (NumberFormatException x) { throw bad("bad \\u escape"); }
                    i += 4;
                }
                default -> throw bad("bad escape \\" + e);
            }
        }
    }
}
