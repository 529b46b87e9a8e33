"""What the browser tests share (class_browser_test.py, lesson_page_browser_test.py): failing
with a message, checking, and Debian's headless Chromium through Selenium and chromedriver with
a closed network. Exit 77 (a skip) when Chromium, chromedriver or Selenium are not installed."""

import shutil
import sys
import tempfile

SKIP = 77


def fail(message):
    print("FAIL: " + message, flush=True)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)
    print("ok: " + message, flush=True)


def chromium(out_dir, width, height, extra_flags=(), capabilities=None):
    """Headless Chromium of width × height with its own profile under out_dir: no background
    connections, no sandbox (the test may run as root), plus `extra_flags`."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("SKIP: python3-selenium is not installed")
        sys.exit(SKIP)
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not binary or not driver:
        print("SKIP: chromium and chromium-driver are not installed")
        sys.exit(SKIP)
    o = webdriver.ChromeOptions()
    o.binary_location = binary
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--window-size=%d,%d" % (width, height),
                 "--user-data-dir=" + tempfile.mkdtemp(dir=out_dir, prefix="chromium-")]:
        o.add_argument(flag)
    for flag in extra_flags:
        o.add_argument(flag)
    for key, value in (capabilities or {}).items():
        o.set_capability(key, value)
    return webdriver.Chrome(service=Service(driver), options=o)
