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
    """Whether ``element`` belongs to a document the browser has left. Chromium's driver says so as a stale
    reference, or, when asked while the new page is replacing the old, as an "unknown error" that the node
    "does not belong to the document"."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.tag_name
        return False
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise


def current_id(driver) -> str:
    return driver.current_url.split("/s/", 1)[1].split("?")[0]


def test_a_reviewer_triages_ten_by_keys_and_the_approved_one_is_posted_once(served, browser, tmp_path):
    from selenium.common.exceptions import NoAlertPresentException

    url, errors = served["url"], []
    _login(browser, url)
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


def _login(browser, url: str) -> None:
    """Log in as the test's reviewer, and wait for the first suggestion the login leads to."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{url}/login")
    browser.find_element("id", "username").send_keys("Browser Reviewer")
    browser.find_element("id", "password").send_keys(PASSWORD)
    browser.find_element("id", "login").click()
    WebDriverWait(browser, 60).until(lambda d: "/s/" in d.current_url
                                     and d.execute_script("return document.readyState") == "complete")


def _type(driver, text: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    ActionChains(driver).key_down(Keys.CONTROL).send_keys("a").key_up(Keys.CONTROL).send_keys(Keys.DELETE) \
        .send_keys(text).perform()


def test_a_reviewer_revises_previews_approves_and_undoes_by_keyboard(served, browser):
    """Revise (e), type the wording and a note, preview, approve; a hostile wording is refused in words;
    undo before the post leaves the talk page as it was; the revision is posted once in the reviewer's
    words with the note; undo after the post withdraws it once; the cited wikitext is copied by one key;
    the single keys can be turned off."""
    from selenium.webdriver.common.keys import Keys

    url, state, opted = served["url"], served["state"], served["opted"]
    mayor = next(r["id"] for r in state.suggestions(page=opted, status="proposed") if "Maria Olsen" in r["update_text"])
    other = next(r["id"] for r in state.suggestions(page="Farther Town", status="proposed"))
    _login(browser, url)
    browser.get(f"{url}/s/{mayor}")
    press_focus(browser, "e")
    assert browser.switch_to.active_element.get_attribute("id") == "text"
    _type(browser, "In March 2026 the town chose Maria Olsen as mayor.")
    browser.switch_to.active_element.send_keys(Keys.TAB)  # the section list: the suggested one is selected
    browser.switch_to.active_element.send_keys(Keys.TAB)  # the note
    browser.switch_to.active_element.send_keys("Checked against the Gazette.")
    old = browser.find_element("tag name", "html")
    browser.find_element("id", "preview").send_keys(Keys.ENTER)
    _wait_new_page(browser, old)
    assert "In March 2026 the town chose Maria Olsen as mayor." in browser.find_element("id", "preview-wikitext") \
        .get_attribute("textContent")
    assert "Browser Reviewer" in browser.find_element("id", "preview-html").text
    assert not ReviewStore(state).decisions(mayor)  # a preview records nothing
    old = browser.find_element("tag name", "html")
    browser.find_element("id", "revise-approve").send_keys(Keys.ENTER)
    _wait_new_page(browser, old)
    _until(lambda: state.suggestion(mayor)["status"] == "approved", lambda: browser.page_source[-3000:])

    browser.get(f"{url}/s/{other}")  # a hostile wording: refused in words, nothing recorded
    press_focus(browser, "e")
    _type(browser, "{{subst:Delete}} See [[Category:Spam]] and https://spam.example/x")
    old = browser.find_element("tag name", "html")
    browser.find_element("id", "revise-approve").send_keys(Keys.ENTER)
    _wait_new_page(browser, old)
    assert browser.find_elements("css selector", "#problems li")
    assert state.suggestion(other)["status"] == "proposed" and not ReviewStore(state).decisions(other)
    errors = [e for e in _console_errors(browser) if "(UNPROCESSABLE ENTITY)" not in e]  # the refusal's 422 itself

    press(browser, "a")  # approve the other as it stands ...
    assert state.suggestion(other)["status"] == "approved"
    press(browser, "u")  # ... and undo it before the bot posts it
    assert state.suggestion(other)["status"] == "proposed"
    run_cycle(served["settings"], [opted, "Farther Town"])
    talk = _text(served, f"Talk:{opted}")
    assert talk.count(f"<!-- winellbot-suggestion:{mayor} -->") == 1, (configured_state(served["settings"]).suggestion(mayor)["status_reason"], list(configured_state(served["settings"]).db["errors"].rows))
    assert "In March 2026 the town chose Maria Olsen as mayor." in talk and "Checked against the Gazette." in talk
    assert "[[User:Browser Reviewer|Browser Reviewer]]" in talk
    assert f"<!-- winellbot-suggestion:{other} -->" not in _text(served, "User:WinellBot/Queue/Farther Town")

    browser.get(f"{url}/queue")
    press(browser, "u")  # the revision, posted: withdrawn by the bot, once
    assert configured_state(served["settings"]).suggestion(mayor)["status"] == "withdrawing"
    run_cycle(served["settings"], [opted])
    talk = _text(served, f"Talk:{opted}")
    assert talk.count(f"<!-- winellbot-suggestion:{mayor} -->") == 1 and f"|id={mayor}|status=withdrawn" in talk

    browser.get(f"{url}/s/{other}")
    press_focus(browser, "c")  # the cited wikitext: copied, or selected to copy
    selected = browser.execute_script("var t = document.getElementById('cite'); return [document.activeElement.id, "
                                      "t.selectionStart, t.selectionEnd, t.value.length]")
    assert selected[0] == "cite" and selected[1] == 0 and selected[2] == selected[3], selected
    assert "<ref>{{cite news" in browser.find_element("id", "cite").get_attribute("value")
    _until(lambda: browser.find_element("id", "copied").text in ("Copied.", "Selected: press Ctrl+C to copy."),
           lambda: browser.find_element("id", "copied").text)  # the clipboard answers a moment later

    browser.find_element("id", "shortcuts").click()  # single keys off: "a" approves nothing
    press_focus(browser, "a")
    assert state.suggestion(other)["status"] == "proposed" and f"/s/{other}" in browser.current_url
    assert errors + _console_errors(browser) == []


def _until(ok, why, seconds: float = 15) -> None:
    """Wait until ``ok()``: the page's answer may reach the state a moment after the browser shows it."""
    import time

    end = time.monotonic() + seconds
    while not ok():
        assert time.monotonic() < end, why()
        time.sleep(0.2)


def press_focus(driver, key: str) -> None:
    """A key that moves the focus on the page (no new page)."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(key).perform()


def _wait_new_page(driver, old) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 30).until(lambda d: _stale(old) and d.execute_script("return document.readyState") == "complete")
