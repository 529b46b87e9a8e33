#!/usr/bin/env python3
"""A lesson as one web page, for real: `export --lesson … --html` writes lessons 05, 08 and 12;
Debian's headless Chromium (through Selenium and chromedriver) opens each from a file:// URL with
the network closed (a proxy at an address nothing answers on, and every request the page makes
checked to be a file), walks every step with the keyboard, answers one question right and one
wrong, checks the feedback, checks that the hidden value is in the page's text and in a
screenshot (read back by tesseract) only after answering, opens a lesson whose every text tries
to end the script or add markup and finds it shown as text, and leaves a 390 × 844 and a
1280 × 720 screenshot in OUT_DIR to be looked at.

usage: lesson_page_browser_test.py ATTENTION_LAB SOURCE_DIR OUT_DIR
Exit 77 (a skip) when Chromium, chromedriver or Selenium are not installed."""

import json
import os
import re
import shutil
import subprocess
import sys

from browser_support import check, chromium

def browser(out_dir):
    # No network: every request would go to a proxy at an address nothing answers on.
    return chromium(out_dir, 1280, 720,
                    ["--proxy-server=http://0.0.0.0:9", "--proxy-bypass-list=<-loopback>"],
                    {"goog:loggingPrefs": {"performance": "ALL"}})


def size(driver, w, h):
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})


def requests_made(driver):
    urls = []
    for entry in driver.get_log("performance"):
        m = json.loads(entry["message"])["message"]
        if m.get("method") == "Network.requestWillBeSent":
            urls.append(m["params"]["request"]["url"])
    return urls


def ocr(png):
    if not shutil.which("tesseract"):
        print("note: tesseract is not installed (tesseract-ocr): screenshot not read back")
        return None
    r = subprocess.run(["tesseract", png, "-"], capture_output=True, text=True)
    return r.stdout


# The page's text a reader can see: everything but the scripts and the <template> of the
# revealed figure (whose content is not part of the document until the answer is given).
VISIBLE_TEXT = """
const section = arguments[0];
let out = "";
const walk = (n) => {
  if (n.nodeType === 3) { out += n.data + " "; return; }
  if (n.nodeType !== 1 || n.tagName === "SCRIPT" || n.tagName === "TEMPLATE") return;
  for (const c of n.childNodes) walk(c);
};
walk(section);
return out;
"""


def walk_steps(driver, name):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    body = driver.find_element(By.TAG_NAME, "body")
    sections = driver.find_elements(By.CSS_SELECTOR, "section.step")
    n = len(sections)
    check(n > 0, "%s: the page has its steps" % name)
    on_screen = ("return [Array.from(document.querySelectorAll('section.step'))"
                 ".flatMap((s, i) => s.offsetParent ? [i] : []),"
                 " document.getElementById('pos').textContent];")
    for k in range(n):
        shown, pos = driver.execute_script(on_screen)
        check(shown == [k] and pos == "Step %d of %d" % (k + 1, n),
              "%s: step %d of %d alone on screen, and the bar says so" % (name, k + 1, n))
        body.send_keys(Keys.ARROW_RIGHT if k % 2 == 0 else Keys.PAGE_DOWN)
    body.send_keys(Keys.PAGE_UP)
    check(sections[n - 2].is_displayed() if n > 1 else True, "%s: Page Up goes back" % name)
    for _ in range(n):
        body.send_keys(Keys.ARROW_LEFT)
    check(sections[0].is_displayed(), "%s: ← goes back to the first step" % name)
    return sections


def go_to(driver, sections, index):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    body = driver.find_element(By.TAG_NAME, "body")
    for _ in range(len(sections)):
        body.send_keys(Keys.ARROW_LEFT)
    for _ in range(index):
        body.send_keys(Keys.ARROW_RIGHT)
    check(sections[index].is_displayed(), "step %d on screen" % (index + 1))
    return sections[index]


def open_page(driver, path):
    # A fresh browser profile, and each lesson keeps its progress under its own key: the page
    # starts at step 1 with nothing answered.
    driver.get("file://" + path)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    cli, source, out_dir = (os.path.abspath(a) for a in sys.argv[1:])
    os.makedirs(out_dir, exist_ok=True)
    driver = browser(out_dir)
    try:
        from selenium.webdriver.common.by import By
        pages = {}
        for lesson in ["05-fear-is-by-hand", "08-mqa-gqa-kv-cache", "12-induction-heads"]:
            path = os.path.join(out_dir, lesson + ".html")
            subprocess.run([cli, "export", "--lesson", lesson, "--html", path], check=True,
                           stdout=subprocess.DEVNULL)
            text = open(path, encoding="utf-8").read()
            check(not re.search(r"(?i)(https?:|//[a-z0-9.-]+\.[a-z]{2,}/)", text),
                  "%s: no URL anywhere in the file" % lesson)
            pages[lesson] = path

        # Lesson 05 on a 1280 × 720 screen: its expected answers from the example's own Q and K.
        example = json.load(open(os.path.join(source, "assets/examples/fear-is.json")))
        q, k = example["q"], example["k"]
        dot = lambda a, b: sum(x * y for x, y in zip(a, b))
        s00, s01 = dot(q[0], k[0]), dot(q[0], k[1])
        size(driver, 1280, 720)
        open_page(driver, pages["05-fear-is-by-hand"])
        sections = walk_steps(driver, "05")

        # Step 2 asks for q_Fear · k_Fear: answered right.
        right = "%.2f" % s00
        step = go_to(driver, sections, 1)
        check(right not in driver.execute_script(VISIBLE_TEXT, step),
              "05: %s is nowhere in step 2's text before answering" % right)
        before_png = os.path.join(out_dir, "lesson-05-step2-before.png")
        step.screenshot(before_png)
        seen = ocr(before_png)
        if seen is not None:
            check(right not in seen, "05: %s is not in the screenshot before answering" % right)
        step.find_element(By.CSS_SELECTOR, "input.number").send_keys(right)
        step.find_element(By.CSS_SELECTOR, "button.check").click()
        feedback = step.find_element(By.CSS_SELECTOR, ".feedback").text
        check(feedback.startswith("✓ Right: %.4f." % s00), "05: the right answer is told right: " + feedback)
        check(step.find_element(By.CSS_SELECTOR, ".feedback").get_attribute("class") == "feedback right",
              "05: shown as right")
        figure_text = driver.execute_script(VISIBLE_TEXT, step.find_element(By.CSS_SELECTOR, ".pic"))
        check(right in figure_text, "05: the figure now holds %s" % right)
        after_png = os.path.join(out_dir, "lesson-05-step2-after.png")
        step.screenshot(after_png)
        seen = ocr(after_png)
        if seen is not None:
            check(right in seen, "05: %s is in the screenshot after answering" % right)
        driver.save_screenshot(os.path.join(out_dir, "lesson-05-1280x720.png"))

        # Step 4 asks for q_Fear · k_is: answered wrong by 0.04.
        step = go_to(driver, sections, 3)
        hidden = "%.2f" % s01
        check(hidden not in driver.execute_script(VISIBLE_TEXT, step),
              "05: %s is nowhere in step 4's text before answering" % hidden)
        step.find_element(By.CSS_SELECTOR, "input.number").send_keys("%.2f" % (s01 - 0.04))
        step.find_element(By.CSS_SELECTOR, "button.check").click()
        feedback = step.find_element(By.CSS_SELECTOR, ".feedback").text
        check(feedback.startswith("✗ Not quite: the answer is %.4f (you were off by 0.0400)." % s01),
              "05: a wrong answer is told wrong, with the answer: " + feedback)
        check(hidden in driver.execute_script(VISIBLE_TEXT, step), "05: step 4 now shows %s" % hidden)

        # Progress is kept: a reload shows the same step and its answer.
        driver.refresh()
        sections = driver.find_elements(By.CSS_SELECTOR, "section.step")
        check(sections[3].is_displayed(), "05: a reload comes back to step 4")
        check("Not quite" in sections[3].find_element(By.CSS_SELECTOR, ".feedback").text,
              "05: a reload keeps the answer")
        driver.find_element(By.ID, "restart").click()
        sections = driver.find_elements(By.CSS_SELECTOR, "section.step")
        check(sections[0].is_displayed() and
              sections[3].find_element(By.CSS_SELECTOR, ".feedback").text == "",
              "05: Start again forgets the answers")

        # Lesson 08 on a phone: Show answer on step 1 (an MQA example has 1 key/value head).
        size(driver, 390, 844)
        open_page(driver, pages["08-mqa-gqa-kv-cache"])
        sections = walk_steps(driver, "08")
        # A swipe to the left is the next step, to the right the previous one.
        driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True})
        for x0, x1, expected in [(320, 80, 1), (80, 320, 0)]:
            touch = lambda kind, x: driver.execute_cdp_cmd(
                "Input.dispatchTouchEvent",
                {"type": kind, "touchPoints": [] if kind == "touchEnd" else [{"x": x, "y": 130}]})
            touch("touchStart", x0)
            touch("touchMove", (x0 + x1) / 2)
            touch("touchMove", x1)
            touch("touchEnd", x1)
            check(sections[expected].is_displayed(),
                  "08: a swipe %s shows step %d" % ("left" if x1 < x0 else "right", expected + 1))
        step = go_to(driver, sections, 0)
        step.find_element(By.CSS_SELECTOR, "button.show").click()
        check(step.find_element(By.CSS_SELECTOR, ".feedback").text.startswith("The answer: 1."),
              "08: Show answer gives 1 key/value head")
        driver.save_screenshot(os.path.join(out_dir, "lesson-08-390x844.png"))

        # Lesson 12: a statement question, its right choice from the lesson file.
        lesson = json.load(open(os.path.join(source, "assets/lessons/12-induction-heads.json")))
        index = next(i for i, s in enumerate(lesson["steps"]) if s.get("question"))
        choices = lesson["steps"][index]["question"]["choices"]
        correct = next(i for i, c in enumerate(choices) if c.get("correct"))
        open_page(driver, pages["12-induction-heads"])
        sections = walk_steps(driver, "12")
        step = go_to(driver, sections, index)
        buttons = step.find_elements(By.CSS_SELECTOR, "button.choice")
        check([b.text for b in buttons] == ["%c. %s" % (65 + i, c["text"]) for i, c in enumerate(choices)],
              "12: the choices are the lesson's, lettered")
        buttons[(correct + 1) % len(buttons)].click()
        step.find_element(By.CSS_SELECTOR, "button.check").click()
        check(step.find_element(By.CSS_SELECTOR, ".feedback").text.startswith("✗ Not quite"),
              "12: a wrong choice is told wrong")
        buttons[correct].click()
        step.find_element(By.CSS_SELECTOR, "button.check").click()
        check(step.find_element(By.CSS_SELECTOR, ".feedback").text.startswith("✓ Right"),
              "12: the right choice is told right")
        driver.save_screenshot(os.path.join(out_dir, "lesson-12-390x844.png"))

        # A lesson whose every text tries to end the script or add markup stays text.
        hostile = {"format": "attention-lab-lesson", "version": 1,
                   "title": "</script><script>document.title='pwned'</script><!--",
                   "summary": "<img src=x onerror=alert(1)> \u2028 & more",
                   "steps": [{"title": "<b>bold</b> \"q\" 'a'", "example": "fear-is",
                              "stage": "weights", "text": ["</script><!-- <script>", "\u2029 <i>"],
                              "question": {"kind": "statement",
                                           "prompt": "</template><script>x=1</script>",
                                           "choices": [{"text": "<svg onload=alert(1)>",
                                                        "correct": True}, {"text": "no"}],
                                           "explanation": "</script> <!-- -->"}}]}
        source_file = os.path.join(out_dir, "hostile.json")
        json.dump(hostile, open(source_file, "w"))
        path = os.path.join(out_dir, "hostile.html")
        subprocess.run([cli, "export", "--lesson", source_file, "--html", path], check=True,
                       stdout=subprocess.DEVNULL)
        pages["hostile"] = path
        open_page(driver, path)
        check(driver.title == hostile["title"], "hostile: the title is text")
        check(len(driver.find_elements(By.TAG_NAME, "script")) == 2 and
              not driver.find_elements(By.CSS_SELECTOR, "img, b, i, main svg[onload]"),
              "hostile: no script or element came from the lesson's words")
        check(driver.find_element(By.CSS_SELECTOR, "section h2").text == hostile["steps"][0]["title"],
              "hostile: the step's title is shown as written")
        driver.find_elements(By.CSS_SELECTOR, ".choice")[0].click()
        driver.find_element(By.CSS_SELECTOR, ".check").click()
        check(driver.find_element(By.CSS_SELECTOR, ".feedback").text ==
              "✓ Right: A. <svg onload=alert(1)>. </script> <!-- -->",
              "hostile: the script runs and shows the explanation as text")

        # The browser's own pages (chrome://, its new tab) aside, only the lessons' files.
        urls = requests_made(driver)
        outside = [u for u in urls if not u.startswith(("file://", "data:", "chrome://"))]
        check(not outside, "no request leaves the machine: %s" % outside[:5])
        files = {u for u in urls if u.startswith("file://")}
        check(files == {"file://" + p for p in pages.values()},
              "the pages asked for no file but themselves: %s" % sorted(files))
    finally:
        driver.quit()
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
