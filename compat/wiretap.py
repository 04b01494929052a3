#!/usr/bin/env python3
"""Observes the protocol a client speaks, on the wire, whatever the client.

The SDK suites written in Python and JavaScript hook their SDK to see each
request; Java, Go and the frameworks on top of SDKs (Spring, JMS, Celery)
offer no uniform hook, so compat/run.sh puts this small recording reverse
proxy between such a suite and its fresh retsu. The proxy forwards every
request unchanged (the Host header too, so the queue URLs retsu builds from
it lead back through the proxy) and logs one JSON line per request:
  {"method", "path", "service", "protocol": "json"|"query"|"unknown", "op", "status", "agent"}
`json` is AWS JSON 1.0 (`X-Amz-Target: AmazonSQS.<Op>`), `query` a form
body or query string with `Action=<Op>`. `service` is the SigV4 credential
scope's service (`sqs`, `sns`; "?" for an unsigned request), so a suite
that drives SNS and SQS through one proxy is judged per service.

  wiretap.py serve --upstream http://127.0.0.1:PORT --log FILE
      prints "wiretap listening on http://127.0.0.1:N" once ready.
  wiretap.py serve ... --capture DIR
      also writes each request whole (method, path, query, headers, body
      in base64) to DIR/NNNNNN.json: fuzz/seeds_from_capture.py turns them
      into the fuzzers' seed corpora.
  wiretap.py fold --log FILE [--service sqs|sns] RESULTS.json...
      records what was observed in each results file's "extra" and fails
      every passing scenario when the client's requests were not all on the
      protocol its "protocol" field claims (or none was seen at all). Only
      the requests of --service count (default sqs, which also takes the
      unsigned ones, as before services were told apart).
Standard library only.
"""

import argparse
import base64
import os
import http.client
import http.server
import json
import socketserver
import sys
import threading
from urllib.parse import parse_qs, urlparse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer",
              "upgrade", "proxy-connection", "expect"}


def service_of(headers):
    """The service of the SigV4 credential scope: Credential=AK/date/region/<service>/aws4_request."""
    auth = headers.get("authorization", "")
    i = auth.find("Credential=")
    if i < 0:
        return "?"
    scope = auth[i + len("Credential="):].split(",", 1)[0].strip().split("/")
    return scope[3] if len(scope) >= 5 else "?"


def classify(headers, body, query):
    target = headers.get("x-amz-target", "")
    if target.startswith("AmazonSQS."):
        return "json", target.split(".", 1)[1]
    form = {}
    if body and "x-www-form-urlencoded" in headers.get("content-type", ""):
        form = parse_qs(body.decode("utf-8", "replace"))
    if "Action" not in form and query:
        form = parse_qs(query)
    if "Action" in form:
        return "query", form["Action"][0]
    return "unknown", "?"


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream = None  # (host, port)
    log_file = None
    capture_dir = None
    captured = 0
    lock = threading.Lock()

    def log_message(self, *args):  # keep stderr quiet
        pass

    def _conn(self):
        conn = getattr(self, "_upstream_conn", None)
        if conn is None:
            conn = http.client.HTTPConnection(*self.upstream, timeout=60)
            self._upstream_conn = conn
        return conn

    def _read_body(self):
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        n = int(self.headers.get("content-length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self):
        body = self._read_body()
        lower = {k.lower(): v for k, v in self.headers.items()}
        url = urlparse(self.path)
        protocol, op = classify(lower, body, url.query)
        service = service_of(lower)
        fwd = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        fwd["Content-Length"] = str(len(body))
        status, rheaders, rbody = 502, [], b""
        for attempt in (1, 2):  # a kept-alive upstream connection may have been closed
            try:
                conn = self._conn()
                conn.request(self.command, self.path, body=body, headers=fwd)
                resp = conn.getresponse()
                status, rheaders, rbody = resp.status, resp.getheaders(), resp.read()
                break
            except (http.client.HTTPException, OSError):
                self._upstream_conn = None
                if attempt == 2:
                    rbody = b"wiretap: upstream unreachable"
        with self.lock:
            if self.capture_dir:
                Proxy.captured += 1
                name = os.path.join(self.capture_dir, f"{Proxy.captured:06d}.json")
                with open(name, "w") as f:
                    json.dump({"method": self.command, "path": url.path, "query": url.query,
                               "headers": list(self.headers.items()),
                               "body": base64.b64encode(body).decode(), "status": status}, f)
            with open(self.log_file, "a") as f:
                f.write(json.dumps({"method": self.command, "path": url.path, "service": service,
                                    "protocol": protocol,
                                    "op": op, "status": status,
                                    "agent": lower.get("user-agent", "").split(" ")[0]}) + "\n")
        self.send_response_only(status)
        for k, v in rheaders:
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(rbody)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(rbody)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(args):
    up = urlparse(args.upstream)
    Proxy.upstream = (up.hostname, up.port or 80)
    Proxy.log_file = args.log
    if args.capture:
        os.makedirs(args.capture, exist_ok=True)
        Proxy.capture_dir = args.capture
    open(args.log, "w").close()
    srv = Server(("127.0.0.1", 0), Proxy)
    print(f"wiretap listening on http://127.0.0.1:{srv.server_address[1]}", flush=True)
    srv.serve_forever()


def counts_for(rec, service):
    got = rec.get("service", "?")
    return got == service or (service == "sqs" and got == "?")


def observed(log, service="sqs"):
    seen = {}
    total = 0
    agents = set()
    queue_paths = 0
    with open(log) as f:
        for line in f:
            rec = json.loads(line)
            if not counts_for(rec, service):
                continue
            total += 1
            seen.setdefault(rec["protocol"], set()).add(rec["op"])
            agents.add(rec.get("agent") or "?")
            queue_paths += rec["path"] not in ("", "/")
    return total, seen, sorted(agents), queue_paths


def fold(args):
    total, seen, agents, queue_paths = observed(args.log, args.service)
    protocols = sorted(seen)
    for path in args.results:
        with open(path) as f:
            data = json.load(f)
        extra = data.setdefault("extra", {})
        extra["wire_protocols_observed"] = protocols
        extra["requests_observed"] = total
        extra["user_agents_observed"] = agents
        # Clients that post to the queue URL's path (Java v1 on query) rather than to "/".
        extra["requests_to_queue_url_paths"] = queue_paths
        claimed = data.get("protocol")
        problem = None
        if total == 0:
            problem = f"wiretap saw no {args.service} request from this client"
        elif protocols != [claimed]:
            ops = "; ".join(f"{p}: {', '.join(sorted(o))}" for p, o in sorted(seen.items()))
            problem = f"the wire showed {protocols} ({ops}), the client claims {claimed!r}"
        if problem:
            for r in data.get("results", {}).values():
                if r.get("status") == "pass":
                    r["status"], r["detail"] = "fail", problem
        with open(path, "w") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"wiretap: {path}: {total} {args.service} requests, protocols {protocols}"
              + (f"; FAILED: {problem}" if problem else ""))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--upstream", required=True)
    s.add_argument("--log", required=True)
    s.add_argument("--capture", help="directory to write every request to, whole")
    f = sub.add_parser("fold")
    f.add_argument("--log", required=True)
    f.add_argument("--service", default="sqs", help="judge only this service's requests (SigV4 scope)")
    f.add_argument("results", nargs="+")
    args = ap.parse_args(argv)
    return serve(args) if args.cmd == "serve" else fold(args)


if __name__ == "__main__":
    sys.exit(main())
