#!/usr/bin/env python3
"""An HTTP dispatch endpoint for Docket, using only Python's standard library.

Docket POSTs each job of a dispatched kind here, signed per Standard Webhooks
(docs/dispatch.md). This endpoint verifies the signature, then:

  upper     answers at once (200) with the result: {"upper": args.text upper-cased}
  sum       answers 202, then works in the background: reports progress and
            completes the job through Docket's API with the job's lease token,
            the result {"sum": sum of args.numbers}; a negative number fails
            the job instead (no retry)

Run:  DOCKET_DISPATCH_SECRET=whsec_... python3 endpoint.py [--port 8090]
It prints "listening on PORT" once it serves. Then point Docket at it:

  cat > dispatch.json <<JSON
  {"allow": ["127.0.0.1"], "endpoints": [
    {"kind": "upper", "url": "http://127.0.0.1:8090/", "secrets": ["$DOCKET_DISPATCH_SECRET"]},
    {"kind": "sum",   "url": "http://127.0.0.1:8090/", "secrets": ["$DOCKET_DISPATCH_SECRET"]}]}
  JSON
  docket serve --dispatch-config dispatch.json
  curl -X POST localhost:8080/v1/dispatch/jobs -H "Authorization: Bearer $KEY" \
    -d '{"kind": "sum", "args": {"numbers": [1, 2, 3.5]}}'
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 5 * 60
MAX_BODY = 1 << 20


def parse_secret(secret):
    key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    if len(key) < 24:
        raise ValueError("secret shorter than 24 bytes")
    return key


def verify(key, headers, body, now=None):
    """Raise ValueError unless the request is signed with key (Standard Webhooks)."""
    msg_id = headers.get("webhook-id")
    ts = headers.get("webhook-timestamp")
    sigs = headers.get("webhook-signature")
    if not msg_id or not ts or not sigs:
        raise ValueError("missing signature headers")
    try:
        ts_int = int(ts)
    except ValueError:
        raise ValueError("bad webhook-timestamp") from None
    now = time.time() if now is None else now
    if abs(now - ts_int) > TOLERANCE_SECONDS:
        raise ValueError("timestamp outside the tolerance")
    signed = msg_id.encode() + b"." + ts.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for sig in sigs.split(" "):
        version, _, value = sig.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return
    raise ValueError("no matching signature")


def call_docket(url, token, payload):
    """POST payload to a Docket callback URL with the lease token."""
    req = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status


def work_sum(job, callback):
    """The asynchronous kind: progress, then completion or failure, via the API."""
    token = callback["token"]
    numbers = (job.get("args") or {}).get("numbers", [])
    try:
        call_docket(callback["progress_url"], token, {"stage": "adding", "percent": 50, "message": "%d numbers" % len(numbers)})
        if any(n < 0 for n in numbers):
            call_docket(callback["fail_url"], token, {"error": "negative numbers are not summed", "retry": False})
            return
        call_docket(callback["complete_url"], token, {"result": {"sum": sum(numbers)}})
    except Exception as e:  # a 409 means the attempt ended meanwhile: nothing to do
        print("sum job %s: %s" % (job.get("id"), e), file=sys.stderr, flush=True)


class Handler(BaseHTTPRequestHandler):
    key = b""

    def log_message(self, fmt, *args):
        print("endpoint: " + fmt % args, file=sys.stderr, flush=True)

    def answer(self, status, obj=None):
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if obj is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.answer(413, {"error": "too large"})
        body = self.rfile.read(length)
        try:
            verify(self.key, self.headers, body)
        except ValueError as e:
            return self.answer(401, {"error": str(e)})
        data = json.loads(body)["data"]
        job, callback = data["job"], data["callback"]
        if job["kind"] == "upper":
            return self.answer(200, {"upper": str((job.get("args") or {}).get("text", "")).upper()})
        if job["kind"] == "sum":
            self.answer(202)
            threading.Thread(target=work_sum, args=(job, callback), daemon=True).start()
            return
        self.answer(422, {"error": "unknown kind " + job["kind"]})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8090)
    args = ap.parse_args()
    secret = os.environ.get("DOCKET_DISPATCH_SECRET", "")
    try:
        Handler.key = parse_secret(secret)
    except ValueError as e:
        sys.exit("DOCKET_DISPATCH_SECRET: %s" % e)
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    print("listening on %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
