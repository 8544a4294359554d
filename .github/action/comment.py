#!/usr/bin/env python3
"""The ncugate action's sticky pull-request comment (action.yml input `comment`).

One comment per pull request, found by the hidden marker `<!-- ncugate -->` among the pull
request's comments and updated in place; its body is ncugate's Markdown report (failures first,
with their why; skipped and ungated checks counted), then a link to the HTML report (the run's
page, where the uploaded report-dir artifact is listed, or `comment-report-url`).

  on-failure (default)  create the comment when the result is regression or error; update an
                        existing one whatever the result (so a fixed pull request does not keep
                        an old failure on show)
  always                create or update it on every run
  never                 touch nothing

GitHub REST only (list the issue's comments, then PATCH the one with the marker or POST a new
one), with the token the workflow grants (`github.token`, which needs `pull-requests: write`).
Never fails the step: no pull request, no token, a read-only token (a fork's pull request) or an
unreachable API is a warning annotation, and the gate's exit status stays ncugate's.

Environment (run.sh sets it):
  NCUGATE_COMMENT            on-failure | always | never
  NCUGATE_COMMENT_RESULT     pass | regression | error
  NCUGATE_COMMENT_MARKDOWN   the Markdown report
  NCUGATE_COMMENT_TOKEN      the token
  NCUGATE_COMMENT_PR         the pull request's number (default: the event's, GITHUB_EVENT_PATH)
  NCUGATE_COMMENT_REPORT_URL the HTML report's link (default: the run's page)
  GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_SERVER_URL, GITHUB_RUN_ID, GITHUB_SHA
"""

import json
import os
import re
import sys
import urllib.error
import urllib.request

MARKER = "<!-- ncugate -->"
# GitHub refuses comment bodies over 65,536 characters.
LIMIT = 65_000


def escape(text):
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def warn(text):
    print(f"::warning title=ncugate comment::{escape(text)}", flush=True)


def say(text):
    print(f"ncugate-action: comment: {text}", file=sys.stderr, flush=True)


def pr_number():
    """The pull request's number: given, else the event's; None when there is none."""
    given = os.environ.get("NCUGATE_COMMENT_PR", "").strip()
    if given:
        if re.fullmatch(r"[1-9][0-9]{0,9}", given):
            return given
        warn(f"comment-pr must be a pull request number, not {given!r}: no comment")
        return None
    path = os.environ.get("GITHUB_EVENT_PATH", "")
    try:
        with open(path, encoding="utf-8") as f:
            event = json.load(f)
    except (OSError, ValueError):
        return None
    number = (event.get("pull_request") or {}).get("number")
    if number is None and (event.get("issue") or {}).get("pull_request"):
        number = event["issue"].get("number")
    return str(number) if isinstance(number, int) and number > 0 else None


class Api:
    def __init__(self, token):
        self.base = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
        self.token = token

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps({"body": body}).encode()
        request = urllib.request.Request(self.base.rstrip("/") + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", "2022-11-28")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")


def existing(api, repo, number):
    """The id of the comment with the marker, or None (the first 10 pages of 100)."""
    for page in range(1, 11):
        comments = api.call("GET", f"/repos/{repo}/issues/{number}/comments?per_page=100&page={page}")
        if not isinstance(comments, list):
            return None
        for c in comments:
            if isinstance(c, dict) and MARKER in str(c.get("body", "")):
                return c.get("id")
        if len(comments) < 100:
            return None
    return None


def body(markdown_path, result):
    try:
        with open(markdown_path, encoding="utf-8", errors="replace") as f:
            report = f.read()
    except OSError:
        report = f"## ncugate: {result}\n\nncugate wrote no Markdown report (see the job's log)."
    if len(report) > LIMIT:
        report = report[:LIMIT] + "\n\n… (cut: the whole report is in the job's step summary)\n"
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    run = os.environ.get("GITHUB_RUN_ID", "")
    link = os.environ.get("NCUGATE_COMMENT_REPORT_URL") or (
        f"{server}/{repo}/actions/runs/{run}" if repo and run else ""
    )
    sha = os.environ.get("GITHUB_SHA", "")[:12]
    footer = f"ncugate: {result}" + (f" at `{sha}`" if sha else "")
    if link:
        footer += f" · [HTML report and artifacts]({link})"
    footer += " · this comment is updated in place by each run"
    return f"{MARKER}\n{report.rstrip()}\n\n---\n<sub>{footer}</sub>\n"


def main():
    mode = os.environ.get("NCUGATE_COMMENT", "on-failure") or "on-failure"
    result = os.environ.get("NCUGATE_COMMENT_RESULT", "error")
    if mode == "never":
        return
    number = pr_number()
    if number is None:
        say("not a pull request: no comment")
        return
    token = os.environ.get("NCUGATE_COMMENT_TOKEN", "")
    if not token:
        warn("comment: no token (github-token is empty): no comment")
        return
    repo = os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        warn(f"comment: GITHUB_REPOSITORY {repo!r} is not owner/name: no comment")
        return
    api = Api(token)
    try:
        found = existing(api, repo, number)
        if found is None and mode == "on-failure" and result == "pass":
            say(f"pull request #{number} passed and has no ncugate comment: none made (comment: on-failure)")
            return
        text = body(os.environ.get("NCUGATE_COMMENT_MARKDOWN", ""), result)
        if found is not None:
            api.call("PATCH", f"/repos/{repo}/issues/comments/{int(found)}", text)
            say(f"updated comment {found} on pull request #{number}")
        else:
            api.call("POST", f"/repos/{repo}/issues/{number}/comments", text)
            say(f"created a comment on pull request #{number}")
    except urllib.error.HTTPError as e:
        hint = ""
        if e.code in (401, 403, 404):
            hint = (
                " (the token may not write to pull requests: give the job `permissions: "
                "pull-requests: write`; a fork's pull request gets a read-only token, see "
                "docs/github-actions.md for the workflow_run pattern)"
            )
        warn(f"comment on pull request #{number} failed: HTTP {e.code}{hint}")
    except (urllib.error.URLError, OSError, ValueError) as e:
        warn(f"comment on pull request #{number} failed: {e}")


if __name__ == "__main__":
    main()
