"""The web app in a real browser: Debian's Chromium (`make chromium` installs it) driven by
Playwright's Python package, each page checked with axe-core (shipped in the
`axe-playwright-python` wheel).

    with launched() as browser:
        tab = Tab(browser, DESKTOP)
        tab.page.goto(url)
        tab.check("documents")  # no script error, no dialog, no axe violation
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
KEY_ITEM = "treerag.api-key"  # where the web app keeps the API key (common.js)


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Debian's chromium is missing: `make chromium` installs it (apt-get install chromium)"
    return path


@contextmanager
def launched() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # As root Chromium needs --no-sandbox; the pages it opens are our own.
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


class Tab:
    """A browser context and its first tab, recording what must never happen: script errors,
    dialogs, console errors. `key` is entered as if typed into an earlier page of the tab."""

    def __init__(self, browser: Any, viewport: dict[str, int], key: str | None = None) -> None:
        self.context = browser.new_context(viewport=viewport)
        if key:
            self.context.add_init_script(f"sessionStorage.setItem({json.dumps(KEY_ITEM)}, {json.dumps(key)})")
        self.problems: list[str] = []
        self.page = self.open()

    def open(self) -> Any:
        """Another tab of the same browser context (the same localStorage, its own sessionStorage)."""
        page = self.context.new_page()
        page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))
        page.on("dialog", lambda dialog: (self.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        page.on("console", lambda message: message.type == "error" and not message.text.startswith(
            "Failed to load resource") and self.problems.append(f"console: {message.text}"))
        return page

    def check(self, name: str, page: Any = None) -> None:
        assert self.problems == [], self.problems
        assert_accessible(page or self.page, name)

    def close(self) -> None:
        self.context.close()


SERIOUS = frozenset({"serious", "critical"})


def assert_accessible(page: Any, name: str, impacts: frozenset[str] | None = None) -> None:
    """No axe-core violation on the page as it is now: none at all, or none of `impacts`."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    violations = [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in results.response["violations"]
                  if impacts is None or v["impact"] in impacts]
    assert violations == [], f"{name}: {violations}"
