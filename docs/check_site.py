"""Check the built docs site in a real browser: the steppers step with no kernel.

    python docs/check_site.py docs/_build/html

``make docs`` runs this after Sphinx. It serves the site on a free localhost
port, opens lesson 2 in Debian's Chromium (through Playwright, as the browser
test does) and checks that

* the BackpropStepper's saved widget state renders: a frame is on the page;
* moving the step slider with the arrow keys shows the next frames, in the
  browser alone, since a static page has no kernel;
* the page asked no other host for anything (the widget JavaScript and MathJax
  are vendored in docs/_static/, never loaded from a CDN) and nothing it asked
  for was missing, the browser's own favicon request aside.

It saves a screenshot as test-output/docs/lesson2_stepper.png and exits with
status 1, saying what went wrong, if a check fails.
"""
import functools
import http.server
import pathlib
import sys
import threading
from urllib.parse import urlparse

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))
from labserver import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  (the browser test's settings)

LESSON = "lessons/02_backward_pass_as_a_queue.html"
FRAME = ".tg-stepper-widget .tg-frame"
STEPS = 3


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def check(site):
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"127.0.0.1:{server.server_address[1]}"
    problems, foreign, missing = [], [], []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda r: foreign.append(r.url)
                    if urlparse(r.url).netloc not in (origin, "") else None)
            page.on("response", lambda r: missing.append(r.url)
                    if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
            page.goto(f"http://{origin}/{LESSON}")
            page.wait_for_selector(FRAME, timeout=60_000)
            shown = [page.locator(FRAME).first.get_attribute("data-step")]
            page.locator(f"{FRAME}").first.scroll_into_view_if_needed()
            page.locator(".tg-stepper-widget .noUi-handle").first.focus()
            for step in range(1, STEPS + 1):
                page.keyboard.press("ArrowRight")
                page.wait_for_selector(f"{FRAME}[data-step='{step}']", timeout=10_000)
                shown.append(page.locator(FRAME).first.get_attribute("data-step"))
            out = REPO / "test-output" / "docs"
            out.mkdir(parents=True, exist_ok=True)
            page.locator(".tg-stepper-widget").first.screenshot(path=str(out / "lesson2_stepper.png"))
            browser.close()
    except Exception as error:   # a timeout says the stepper did not render or step
        problems.append(f"the stepper on {LESSON} did not render or step: {error}")
    finally:
        server.shutdown()
    if not problems and shown != [str(i) for i in range(STEPS + 1)]:
        problems.append(f"the frames shown were steps {shown}, not 0 to {STEPS}")
    if foreign:
        problems.append(f"the page loaded from other hosts (vendor them in docs/_static/): "
                        f"{sorted(set(foreign))[:5]}")
    if missing:
        problems.append(f"the page asked for files the site lacks: {sorted(set(missing))[:5]}")
    return problems


def main(argv):
    site = pathlib.Path(argv[1] if len(argv) > 1 else REPO / "docs" / "_build" / "html")
    if not (site / LESSON).exists():
        sys.exit(f"{site / LESSON} is missing: build the site first (make docs).")
    problems = check(site)
    for problem in problems:
        print("docs site check failed:", problem)
    if problems:
        sys.exit(1)
    print(f"docs site check passed: {LESSON} steps through its frames with no kernel, "
          f"and loads nothing from other hosts")


if __name__ == "__main__":
    main(sys.argv)
