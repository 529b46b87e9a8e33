#!/usr/bin/env python3
"""Class mode for real: the app under Xvfb serves a lesson on 127.0.0.1, a real browser (Debian's
Chromium, driven by Selenium through chromedriver) joins on a phone-sized window, answers a
choice and a number and follows the teacher's Page Down; 60 simulated students answer at once
and all are counted; the bad inputs of docs/robustness.md ("Class mode") each get their status
and the server goes on serving; R reveals the answer to the page. Screenshots of the student page
and of the teacher's screen are left in OUT_DIR to be looked at.

usage: class_browser_test.py ATTENTION_LAB OUT_DIR   (run under an X display, e.g. xvfb-run)
Exit 77 (a skip) when Chromium, chromedriver or Selenium are not installed."""

import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from browser_support import SKIP, check, chromium, fail

CODE = "4821"


class Server:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def state(self):
        status, body = self.request("GET", "/api/state?code=" + CODE)
        if status != 200:
            fail("GET /api/state answered %d" % status)
        return json.loads(body)

    def answer(self, client, text, code=CODE):
        body = json.dumps({"code": code, "client": client, "answer": text}).encode()
        return self.request("POST", "/api/answer", body, {"Content-Type": "application/json"})


def start_app(cli, out_dir):
    args = [cli, "gui", "--lesson", "05-fear-is-by-hand", "--lesson-step", "3", "--class-mode",
            "--class-bind", "127.0.0.1", "--class-port", "0", "--class-code", CODE,
            "--size", "1280x720", "--presentation", "--no-animation"]
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(out_dir, "config"))
    app = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=env)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = app.stdout.readline()
        if not line:
            fail("the app ended before class mode started (exit %s)" % app.poll())
        if line.startswith("class mode: "):
            url = line.split(": ", 1)[1].strip()
            port = int(url.split(":")[2].split("/")[0])
            # Keep reading its output so it never blocks on a full pipe.
            threading.Thread(target=lambda: app.stdout.read(), daemon=True).start()
            return app, url, port
    fail("class mode did not start within 60 s")


def app_window(pid):
    """The app's X window (GLFW sets _NET_WM_PID; the page's title says Attention Lab too)."""
    for _ in range(100):
        r = subprocess.run(["xdotool", "search", "--pid", str(pid)], capture_output=True,
                           text=True)
        ids = r.stdout.split()
        if ids:
            return ids[-1]
        time.sleep(0.1)
    fail("no window of the app's process")


def teacher_key(app, key):
    """A key pressed on the teacher's computer, as a presentation clicker sends it."""
    wid = app_window(app.pid)
    subprocess.run(["xdotool", "windowfocus", "--sync", wid], check=False)
    # A click on the status bar's far end (nothing there to press, and no text box to take the
    # key) gives the window the keyboard as a teacher's first click would.
    geometry = subprocess.run(["xdotool", "getwindowgeometry", "--shell", wid],
                              capture_output=True, text=True, check=True).stdout
    size = dict(line.split("=", 1) for line in geometry.split())
    x, y = int(size["WIDTH"]) - 6, int(size["HEIGHT"]) - 6
    subprocess.run(["xdotool", "mousemove", "--window", wid, str(x), str(y), "click", "1"],
                   check=True)
    time.sleep(0.2)
    # Held for a tenth of a second, as a finger does: Dear ImGui 1.86 reads key state once a
    # frame, so a press and release inside one frame would be lost.
    subprocess.run(["xdotool", "keydown", key], check=True)
    time.sleep(0.1)
    subprocess.run(["xdotool", "keyup", key], check=True)


def browser(out_dir):
    return chromium(out_dir, 390, 844)


def wait_for(what, predicate, seconds=10):
    start = time.time()
    while time.time() - start < seconds:
        try:
            if predicate():
                return time.time() - start
        except Exception:  # the page is between two renders
            pass
        time.sleep(0.05)
    fail("timed out waiting for " + what)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    cli, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    if not shutil.which("xdotool"):
        print("SKIP: xdotool is not installed")
        return SKIP
    driver = browser(out_dir)
    app, url, port = start_app(cli, out_dir)
    server = Server(port)
    try:
        from selenium.webdriver.common.by import By
        find = lambda id_: driver.find_element(By.ID, id_)

        # The phone joins through the QR code's URL (the code in it) and sees step 3's choice
        # question with its picture.
        wait_for("the app to serve step 3", lambda: server.state()["step"] == 3)
        s = server.state()
        check(s["kind"] == "choice", "the app serves step 3's choice question")
        driver.get(url)
        wait_for("the question on the page",
                 lambda: find("question").text == s["question"] and find("question").is_displayed())
        wait_for("the step's picture",
                 lambda: driver.execute_script(
                     "const p = document.getElementById('picture');"
                     "return !p.hidden && p.complete && p.naturalWidth > 0;"))
        check(True, "the page shows the question and the step's picture")
        driver.save_screenshot(os.path.join(out_dir, "class-student-choice.png"))
        buttons = driver.find_elements(By.CSS_SELECTOR, "#choices button")
        # Lettered A, B, C… when the projector letters them (statements), as they are otherwise.
        offered = ["%c. %s" % (chr(65 + i), c) for i, c in enumerate(s["choices"])] \
            if s.get("lettered") else s["choices"]
        check([b.text for b in buttons] == offered, "the page offers the lesson's choices")
        buttons[0].click()
        find("send").click()
        wait_for("Sent", lambda: find("status").text.startswith("Sent"))
        check(server.state()["answers"] == 1, "the browser's choice is counted")

        # The teacher presses Page Down: the page follows.
        teacher_key(app, "Next")
        follow = wait_for("the page to follow the step change",
                          lambda: find("title").text.startswith("Step 4"), seconds=5)
        check(follow < 2.0, "the page followed Page Down in %.2f s" % follow)
        s = server.state()
        check(s["kind"] == "number", "step 4 asks for a number")
        wait_for("the number box", lambda: find("number").is_displayed())
        find("number").send_keys("0.54")
        find("send").click()
        wait_for("Sent", lambda: find("status").text.startswith("Sent"))
        driver.save_screenshot(os.path.join(out_dir, "class-student-number.png"))
        check(server.state()["answers"] == 1, "the browser's number is counted")

        # 60 students answer at once: every one is counted; the latency is quoted.
        barrier = threading.Barrier(60)
        results = [None] * 60

        def student(k):
            barrier.wait()
            t0 = time.perf_counter()
            status, _ = server.answer("student-%02d" % k, "0.54" if k % 3 else "0.5")
            results[k] = (status, time.perf_counter() - t0)

        threads = [threading.Thread(target=student, args=(k,)) for k in range(60)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = [r[0] for r in results]
        ms = sorted(1000 * r[1] for r in results)
        check(statuses == [200] * 60, "60 students answering at once all get 200")
        print("answer latency, 60 at once: median %.1f ms, 95th %.1f ms, max %.1f ms"
              % (statistics.median(ms), ms[56], ms[-1]), flush=True)
        check(server.state()["answers"] == 61, "all 60 and the browser are counted (61)")

        # Bad inputs: each its status, and the server keeps serving.
        def survives(what, status, expected):
            check(status == expected, "%s is %d (got %d)" % (what, expected, status))
            check(server.state()["step"] == 4, "the server serves on after: " + what)

        survives("a wrong code", server.answer("x", "0.5", code="0000")[0], 403)
        survives("a state with a wrong code", server.request("GET", "/api/state?code=1")[0], 403)
        big = json.dumps({"code": CODE, "client": "big", "answer": "9" * 5000}).encode()
        survives("a 5 KB body", server.request("POST", "/api/answer", big,
                                               {"Content-Type": "application/json"})[0], 413)
        survives("malformed JSON", server.request("POST", "/api/answer", b"{\"code\": ",
                                                  {"Content-Type": "application/json"})[0], 400)
        survives("an answer that is not a number", server.answer("y", "zero point five")[0], 400)
        for path in ["/../../etc/passwd", "/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                     "/step.svg/../../etc/passwd", "/assets/student.html", "/api/results",
                     "/index.html"]:
            survives("GET " + path, server.request("GET", path)[0], 404)
        flood = [server.answer("flood", "0.5")[0] for _ in range(30)]
        survives("a flood of 30 answers from one client", 429 if 429 in flood else flood[-1], 429)
        check(server.state()["answers"] == 62,
              "of the bad and the flood, only the flooding client's first answers count, once (62)")

        # The join screen has left the stage since Page Down; R on the teacher's keyboard
        # reveals: the page says so, with the answer, and the teacher's screen shows the class's
        # answers.
        teacher_key(app, "r")
        wait_for("the reveal on the page",
                 lambda: find("revealed").is_displayed() and "0.5400" in find("revealed").text)
        check(True, "the page says the answer was revealed: " + find("revealed").text)
        driver.save_screenshot(os.path.join(out_dir, "class-student-revealed.png"))
        # The teacher's screen too, for a person to look at, where ImageMagick's `import` is
        # installed (the test checks nothing in it, so it does not install it).
        if shutil.which("import"):
            time.sleep(0.5)
            shot = os.path.join(out_dir, "class-teacher.png")
            subprocess.run(["import", "-window", "root", shot], check=False)
    finally:
        driver.quit()
        app.terminate()
        try:
            app.wait(timeout=15)
        except subprocess.TimeoutExpired:
            app.kill()
    # Once the app is gone, nothing listens.
    try:
        server.request("GET", "/api/state?code=" + CODE)
        fail("the port still answers after the app closed")
    except OSError:
        check(True, "nothing listens once the app has closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
