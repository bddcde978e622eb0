"""The page in a real browser (Debian's Chromium, headless): play to a hit, reload, keep it.

Starts `royal-table serve` on a fixture video, waits for the board, plays the set-up through
the page's own forms, picks a legal move from the tapped hand, resolves the proposed attack,
checks the Army Record, reloads and finds it kept, and saves a screenshot (into the test's tmp
dir; into webui/table/screenshot.png with ROYAL_TABLE_UPDATE_SCREENSHOT=1, so runs keep the tree
clean).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.web_helpers import SETUP, TO_ROUND_2_MOVE
from webui.serve_cli import bundled_video

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[1]
DOCS_SCREENSHOT = ROOT / "webui" / "table" / "screenshot.png"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]

if not Path(CHROMIUM).exists():
    pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")


def fixture_video(tmp_path: Path) -> Path:
    found = bundled_video()
    if found is not None:
        return found
    path = tmp_path / "table.avi"  # until the renderer's recorded games land
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (320, 240))
    for i in range(20):
        img = np.full((240, 320, 3), (40, 90, 50), np.uint8)
        cv2.rectangle(img, (40 + i * 4, 60), (100 + i * 4, 140), (240, 240, 240), -1)
        writer.write(img)
    writer.release()
    return path


@pytest.fixture
def server(tmp_path):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "webui.cli", "serve", "--video", str(fixture_video(tmp_path)),
         "--port", "0", "--data-dir", str(tmp_path / "data")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    line = ""
    for _ in range(20):
        line = proc.stdout.readline()
        if "Royal Table on" in line:
            break
    match = re.search(r"http://[\d.]+:\d+/", line)
    assert match, f"server did not start: {line!r}"
    yield match.group(0)
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


def record_card(page, code: str) -> None:
    page.fill("#chance-card", code)
    page.click("form.chance button[type=submit]")


def click_action(page, action: str) -> None:
    page.click(f'[data-action="{action}"]')


def black_knight_life(page) -> str:
    row = page.locator('table[data-side="black"] tr.unit-row', has_text="knight")
    return row.locator(".tally-life").inner_text()


def test_play_resolve_reload_in_chromium(server, tmp_path):
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        # the page's CSP forbids eval; Playwright's wait_for_function needs it (test side only)
        page = browser.new_page(viewport={"width": 1600, "height": 1000}, bypass_csp=True)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(server)

        # new game form
        page.wait_for_selector("#newgame-form", state="visible")
        page.fill('input[name="name-white"]', SETUP["names"]["white"])
        page.fill('input[name="name-black"]', SETUP["names"]["black"])
        for i, kind in enumerate(SETUP["armies"]["black"]):
            page.select_option(f'select[name="unit-black-{i}"]', kind)
        page.click("#newgame-form button[type=submit]")

        # wait for the board: 35 cells, and the set-up guidance
        page.wait_for_function("document.querySelectorAll('#board g[data-cell]').length === 35")
        assert page.is_visible("#setup-guide")
        page.wait_for_function("document.getElementById('camera-img').naturalWidth > 0")

        for text in TO_ROUND_2_MOVE:  # through the page's own forms and buttons
            side, verb, *rest = text.split()
            if verb in ("setup", "initiative"):
                page.wait_for_selector("#chance-card")
                record_card(page, rest[-1])
                page.wait_for_function(
                    "t => [...document.querySelectorAll('#log li')].some("
                    "li => li.textContent.includes(t))", arg=text)
            elif verb == "move":
                frm, to = rest[0].split("-")
                colour = "red" if rest[1][-1] in "DH" else "black"
                page.click(f'.move[data-from="{frm}"][data-to="{to}"][data-colour="{colour}"]')
                page.select_option("#move-card", rest[1])
                page.click("#play-move")
            else:
                click_action(page, text)
            page.wait_for_function(
                "t => [...document.querySelectorAll('#log li')].some("
                "li => li.textContent.includes(t))", arg=text)

        # pick a legal move: tap JC in the hand, take the exact move it allows
        page.wait_for_selector('.move[data-from="c2"][data-to="c3"]')
        page.click('.chip[data-card="JC"]')
        page.wait_for_function("document.getElementById('moves-mode').textContent"
                               ".includes('exact')")
        page.click('.move[data-from="c2"][data-to="c3"]')
        assert page.locator("#board .cell-bg.hl-to").count() == 1  # highlighted on the board
        page.click("#play-move")

        # the page proposes the attacks after the move; one click resolves one
        risky = page.locator('tr.attack-row[data-action="white attack c4 risky"]')
        risky.wait_for()
        assert "hit" in risky.inner_text() and "c4 \u22123" in risky.inner_text()
        risky.click()
        page.wait_for_function("document.querySelectorAll('tr.attack-row').length === 0")
        assert black_knight_life(page) == "5/8"
        assert page.locator('#board g[data-cell="c4"] .life-text').text_content() == "5/8"

        # reload: the game is kept
        page.reload()
        page.wait_for_function("document.querySelectorAll('#board g[data-cell]').length === 35")
        page.wait_for_selector('table[data-side="black"] tr.unit-row')
        assert black_knight_life(page) == "5/8"

        # on to black's turn for the picture: its options against white's knight
        page.click('.chip[data-card="9C"]')  # white taps a card, then hands over
        assert page.locator(".chip.on").count() == 1
        click_action(page, "white keep")
        click_action(page, "black take-draw")
        page.wait_for_selector('.move[data-from="c4"]')
        # white's tapped hand is not black's: the list is back to card colours
        assert "card colour" in page.text_content("#moves-mode")
        assert page.locator(".chip.on").count() == 0
        page.locator("tr.plan-row", has_text="knight@c4").first.click()
        screenshot = (DOCS_SCREENSHOT if os.environ.get("ROYAL_TABLE_UPDATE_SCREENSHOT")
                      else tmp_path / "webui-screenshot.png")
        screenshot.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(screenshot), full_page=True)
        assert not errors, errors
        browser.close()
    assert screenshot.stat().st_size > 20_000
