#!/usr/bin/env python3
"""A stand-in for GitHub's REST API, for the action's comment tests (no network): it keeps the
comments of each pull request (issue) in STATE (JSON), appends "METHOD PATH" of every request to
REQUESTS, and answers like api.github.com for the three calls the action makes (list an issue's
comments, create one, update one). Repository `example/forked` answers 403, as GitHub does to a
fork's read-only token.

  python3 github_stub.py PORT REQUESTS STATE
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

port, requests, state_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
state = {"next": 1, "issues": {}}


def save():
    with open(state_path, "w") as f:
        json.dump({k: [c["body"] for c in v] for k, v in state["issues"].items()}, f)


class Handler(BaseHTTPRequestHandler):
    def answer(self, code, doc):
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self, method):
        if self.path == "/ping":
            return self.answer(200, {})
        with open(requests, "a") as f:
            f.write(f"{method} {self.path}\n")
        print(method, self.path, self.headers.get("Authorization"), flush=True)
        body = None
        if method in ("POST", "PATCH"):
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))["body"]
        if self.path.startswith("/repos/example/forked/"):
            return self.answer(403, {"message": "Resource not accessible by integration"})
        m = re.fullmatch(r"/repos/example/app/issues/(\d+)/comments(\?.*)?", self.path)
        if m and method == "GET":
            issue = state["issues"].get(m.group(1), [])
            return self.answer(200, [{"id": c["id"], "body": c["body"]} for c in issue])
        if m and method == "POST":
            comment = {"id": state["next"], "body": body}
            state["next"] += 1
            state["issues"].setdefault(m.group(1), []).append(comment)
            save()
            return self.answer(201, comment)
        m = re.fullmatch(r"/repos/example/app/issues/comments/(\d+)", self.path)
        if m and method == "PATCH":
            for issue in state["issues"].values():
                for c in issue:
                    if c["id"] == int(m.group(1)):
                        c["body"] = body
                        save()
                        return self.answer(200, c)
        return self.answer(404, {"message": "Not Found"})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def log_message(self, *args):
        pass


save()
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
