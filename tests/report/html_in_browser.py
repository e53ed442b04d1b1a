#!/usr/bin/env python3
"""Opens HTML reports in headless Chromium and checks that each loads with no console error, no uncaught exception
and no network request (the report must be self-contained), that no <script> element got in, and that its plots and
the texts given with --expect-text are there. Saves a full-page screenshot of the first report with --screenshot.

Talks to Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: fds 3 and 4, NUL-separated JSON),
standard library only. Exits 77 (ctest's skip code) when there is no chromium.

  html_in_browser.py REPORT.html [--expect-figures N] [--expect-text TEXT]... [--screenshot OUT.png] [REPORT2.html ...]
"""
import argparse
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def high_fd(fd):
    """The same file on a descriptor above 10 (the original is closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class DevTools:
    def __init__(self, browser):
        profile = tempfile.mkdtemp(prefix="graphcheck-chromium-")
        # The child reads commands on fd 3 and writes replies and events on fd 4; the pipes' own fds are moved above 4
        # first so that placing them there clobbers nothing.
        to_child_r, self.to_child = (high_fd(fd) for fd in os.pipe())
        self.from_child, from_child_w = (high_fd(fd) for fd in os.pipe())
        self.process = subprocess.Popen(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--remote-debugging-pipe", "--no-first-run", "--user-data-dir=" + profile, "about:blank"],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=lambda: (os.dup2(to_child_r, 3), os.dup2(from_child_w, 4)))
        os.close(to_child_r)
        os.close(from_child_w)
        self.profile = profile
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read_message(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event


def problems_of(events, page_url):
    problems = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append(f"console error: {params.get('args')}")
        elif method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params.get('exceptionDetails')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            problems.append(f"log error: {params['entry'].get('text')} {params['entry'].get('url', '')}")
        elif method == "Network.requestWillBeSent" and params["request"]["url"] != page_url:
            problems.append(f"network request: {params['request']['url']}")
    return problems


def check_report(tools, path, args, screenshot):
    target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        tools.call(f"{domain}.enable", session=session)
    tools.call("Emulation.setDeviceMetricsOverride",
               {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
    tools.events.clear()
    url = "file://" + os.path.abspath(path)
    tools.call("Page.navigate", {"url": url}, session=session)
    tools.wait_for("Page.loadEventFired")
    time.sleep(0.5)  # late console messages

    def evaluate(expression):
        return tools.call("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                          session=session)["result"].get("value")

    problems = problems_of(tools.events, url)
    if evaluate("document.querySelectorAll('script').length") != 0:
        problems.append("a <script> element is in the document")
    figures = evaluate("document.querySelectorAll('figure svg').length")
    if figures < args.expect_figures:
        problems.append(f"{figures} plots, expected at least {args.expect_figures}")
    text = evaluate("document.body.innerText")
    for expected in args.expect_text:
        if expected not in text:
            problems.append(f"text not shown: {expected!r}")
    if screenshot:
        size = tools.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
        shot = tools.call("Page.captureScreenshot",
                          {"format": "png", "captureBeyondViewport": True,
                           "clip": {"x": 0, "y": 0, "width": 1200, "height": min(size["height"], 2400), "scale": 1}},
                          session=session)
        with open(screenshot, "wb") as out:
            out.write(base64.b64decode(shot["data"]))
    tools.call("Target.closeTarget", {"targetId": target})
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--expect-figures", type=int, default=0)
    parser.add_argument("--expect-text", action="append", default=[])
    parser.add_argument("--screenshot")
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIP: no chromium on PATH (Debian package chromium; scripts/setup.sh installs it)")
        return SKIP
    tools = DevTools(browser)
    failures = 0
    try:
        for index, report in enumerate(args.reports):
            problems = check_report(tools, report, args, args.screenshot if index == 0 else None)
            for problem in problems:
                print(f"FAIL: {report}: {problem}")
            failures += 1 if problems else 0
    finally:
        tools.close()
    print(f"{len(args.reports) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
