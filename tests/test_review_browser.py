"""The review page in a real browser: Debian's chromium, headless, driven by Debian's chromium-driver
through selenium, against the real app, the real state and the real local wiki.

A reviewer logs in, triages ten suggestions with the keyboard only, approves one (which the bot's
writer then posts on the talk page once, naming the reviewer), rejects one with reasons (its row is
in the state), is sent by another site's page a form that approves a suggestion (refused: no CSRF
token; nothing recorded), opens the hostile suggestion (nothing of it runs), and the browser's console
shows no error on any of the review page's own pages.
"""
from __future__ import annotations

import shutil
import tempfile
import threading

import pytest
from review_scene import hostile, queue_suggestions
from wikiscene import configured_state, run_cycle

from winellbot.review.app import create_app
from winellbot.state.reviews import ReviewStore

pytestmark = pytest.mark.skipif(shutil.which("chromedriver") is None or shutil.which("chromium") is None,
                                reason="Debian's chromium and chromium-driver are not installed "
                                       "(bash scripts/setup.sh installs them)")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-quic", "--disable-dev-shm-usage"]
PASSWORD = "Browser-review-pass-2026"


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="winellbot-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def served(scene):
    """The scene's opted-in town with real suggestions from a cycle in the reviewed mode, eleven more
    in the queue (one hostile), and the review page served on 127.0.0.1."""
    from werkzeug.serving import make_server

    s = scene["settings"]
    s.review.mode = "reviewed"
    scene["wiki"].create_user("Browser Reviewer", PASSWORD)
    _, state, _ = run_cycle(s, [scene["opted"]])
    real = state.suggestions(page=scene["opted"], status="proposed")
    assert real, "the cycle found nothing to review"
    state.db.execute("update suggestions set estimate = 0.99 where id = ?", [real[0]["id"]])  # first in the queue
    bad = hostile(scene["opted"])
    queue_suggestions(state, ["Farther Town", "Nearer Town", "Middle Town"], per_page=3, extra=[bad],
                      wiki=real[0]["wiki"])  # the wiki the cycle recorded, the page's own
    state.db.execute("update suggestions set estimate = 0.01 where id = ?", [bad.id])  # last: opened by hand
    app = create_app(s, secret_key="browser-test-key-0123456789abcdef")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {**scene, "url": f"http://127.0.0.1:{server.server_port}", "state": state, "first": real[0]["id"],
               "hostile": bad.id}
    finally:
        server.shutdown()
        thread.join(timeout=10)


def press(driver, keys: str, *, alt: bool = False) -> None:
    """Keys as a person types them on the page, then wait for the page the last one leads to."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    old = driver.find_element("tag name", "html")
    chain = ActionChains(driver)
    for key in keys:
        if alt:
            chain.key_down(Keys.ALT).send_keys(key).key_up(Keys.ALT)
        else:
            chain.send_keys(key)
    chain.perform()
    WebDriverWait(driver, 30).until(lambda d: _stale(old) and d.execute_script("return document.readyState") == "complete")


def _stale(element) -> bool:
    from selenium.common.exceptions import StaleElementReferenceException

    try:
        element.tag_name
        return False
    except StaleElementReferenceException:
        return True


def current_id(driver) -> str:
    return driver.current_url.split("/s/", 1)[1].split("?")[0]


def test_a_reviewer_triages_ten_by_keys_and_the_approved_one_is_posted_once(served, browser, tmp_path):
    from selenium.common.exceptions import NoAlertPresentException

    url, errors = served["url"], []
    browser.get(f"{url}/login")
    browser.find_element("id", "username").send_keys("Browser Reviewer")
    browser.find_element("id", "password").send_keys(PASSWORD)
    browser.find_element("id", "login").click()
    assert "/s/" in browser.current_url, browser.page_source[-1500:]
    errors += _console_errors(browser)
    decided: list[tuple[str, str]] = []
    plan = ["a", "12r", "s", "r", "s", "3r", "d", "s", "9r"]  # nine by plain keys ...
    for keys in plan:
        sid = current_id(browser)
        press(browser, keys)
        decided.append((sid, keys[-1]))
        errors += _console_errors(browser)
    sid = current_id(browser)
    press(browser, "s", alt=True)  # ... and the tenth by the button's access key
    decided.append((sid, "s"))
    assert len({sid for sid, _ in decided}) == 10 and decided[0][0] == served["first"]

    store = ReviewStore(served["state"])
    rows = {r["suggestion_id"]: r for r in store.decisions()}
    verdict = {"a": "approve", "r": "reject", "s": "skip", "d": "adopted"}
    assert {sid: rows[sid]["verdict"] for sid, _ in decided} == {sid: verdict[k] for sid, k in decided}
    assert rows[decided[1][0]]["reasons"] == "not_new,insignificant"
    assert all(r["reviewer"] == "Browser Reviewer" for r in rows.values())

    # another site's page (another origin on 127.0.0.1) posts an approval in the reviewer's browser
    assert _forged_post(browser, url, served["hostile"], tmp_path) == "400"
    assert served["hostile"] not in {r["suggestion_id"] for r in store.decisions()}
    assert configured_state(served["settings"]).suggestion(served["hostile"])["status"] == "proposed"
    browser.get_log("browser")  # the refused POST's 400, logged by the browser, is not one of the page's errors

    browser.get(f"{url}/s/{served['hostile']}")
    assert browser.title != "pwned" and "<script>document.title" in browser.find_element("id", "quote").text
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
    assert browser.execute_script("return document.querySelectorAll('img[onerror], script:not([src])').length") == 0
    errors += _console_errors(browser)
    assert errors == []

    report, state, _ = run_cycle(served["settings"], [served["opted"]])
    talk = _text(served, f"Talk:{served['opted']}")
    assert talk.count(f"<!-- winellbot-suggestion:{served['first']} -->") == 1
    assert "[[User:Browser Reviewer|Browser Reviewer]]" in talk
    run_cycle(served["settings"], [served["opted"]])
    assert _text(served, f"Talk:{served['opted']}").count(f"<!-- winellbot-suggestion:{served['first']} -->") == 1
    assert configured_state(served["settings"]).suggestion(served["first"])["status"] == "posted"


def _forged_post(driver, url: str, sid: str, folder) -> str:
    """Open a page served from another origin that submits an approval of ``sid`` to the review page as
    soon as it loads (the session's cookie goes along: same site); returns the error page's code."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
    from selenium.webdriver.support.ui import WebDriverWait

    (folder / "attack.html").write_text(
        f'<form id="f" method="post" action="{url}/s/{sid}/decide"><input name="verdict" value="approve"></form>'
        '<script>document.getElementById("f").submit()</script>', encoding="utf-8")
    other = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(folder)))
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        driver.get(f"http://127.0.0.1:{other.server_port}/attack.html")
        WebDriverWait(driver, 30).until(lambda d: d.current_url.startswith(url) and d.find_elements("id", "error"))
        return driver.find_element("tag name", "h1").text
    finally:
        other.shutdown()
        thread.join(timeout=10)


def _console_errors(driver) -> list[str]:
    return [f"{e['level']}: {e['message']}" for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _text(scene, title: str) -> str:
    import requests

    r = requests.get(scene["wiki"].base_url + "/index.php", params={"title": title, "action": "raw"}, timeout=30)
    return r.text if r.status_code == 200 else ""
