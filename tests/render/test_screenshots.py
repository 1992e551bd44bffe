"""The HTML ticket in a real browser: headless Chromium renders two demo reports at 1280 and 390 px wide.

Chromium's headless window cannot be narrower than about 500 px, so each report is shown in an iframe of
exactly the wanted width: the iframe is the page's viewport (its media queries, its scrollbars). A script in
the host page (the report itself has none) measures the report's page width against that viewport; nothing
may make the page wider than the window. A screenshot of each rendering is kept (set
SCREENSHOTS_DIR=DIR to collect them) for a person to look at. The test skips with the reason where
Chromium is not installed (`.ci/run` installs Debian's `chromium`).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get install chromium; .ci/run does)"
)

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)
"""What headless Chromium needs on a closed machine (no background connections to Google's hosts)."""

WIDTHS = (1280, 390)
SCENARIOS = ("rate-limit", "capacity")

MEASURE = """<script>
const f = document.getElementById('report');
f.addEventListener('load', () => {
  const doc = f.contentDocument, root = doc.documentElement;
  const wide = [...doc.querySelectorAll('body *')]
    .filter(e => !e.closest('.box') && e.getBoundingClientRect().right > root.clientWidth + 0.5)
    .slice(0, 8).map(e => e.tagName.toLowerCase() + (e.className ? '.' + e.className : ''));
  const boxes = [...doc.querySelectorAll('.box')].filter(b => b.scrollWidth > b.clientWidth + 0.5).length;
  document.body.dataset.result = JSON.stringify({scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
                                                  height: root.scrollHeight, wide: wide, scrolling_boxes: boxes});
});
</script>"""


def _host_page(report_html: str, width: int, height: int, measure: bool) -> str:
    """A page holding the report in an iframe of `width` CSS px (srcdoc: same origin, so it can be measured)."""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{margin:0;background:#888}"
        "iframe{border:0;display:block;background:#fff}</style></head><body>"
        f"<iframe id='report' width='{width}' height='{height}' srcdoc=\"{html.escape(report_html)}\"></iframe>"
        + (MEASURE if measure else "")
        + "</body></html>"
    )


def _chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def measure(report_html: str, width: int, tmp: Path) -> dict[str, Any]:
    """The report's page width, viewport width, height and what sticks out, rendered `width` px wide."""
    page = tmp / f"measure-{width}.html"
    page.write_text(_host_page(report_html, width, 900, measure=True), encoding="utf-8")
    proc = _chromium(tmp, "--window-size=1400,1000", "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    found = re.search(r'data-result="([^"]*)"', proc.stdout)
    assert found, f"Chromium printed no measurement (rc {proc.returncode}): {proc.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return result


def screenshot(report_html: str, width: int, height: int, out: Path, tmp: Path) -> None:
    """A PNG of the report rendered `width` px wide, its whole height."""
    page = tmp / f"shot-{width}.html"
    page.write_text(_host_page(report_html, width, height, measure=False), encoding="utf-8")
    proc = _chromium(
        tmp,
        f"--window-size={max(width, 500)},{height}",
        "--virtual-time-budget=3000",
        f"--screenshot={out}",
        page.as_uri(),
    )
    assert out.exists() and out.stat().st_size > 10_000, proc.stderr[-2000:]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The HTML ticket of each demo scenario, written by the real CLI."""
    from tests.conftest import run_cli

    out: dict[str, str] = {}
    tmp = tmp_path_factory.mktemp("reports")
    for scenario in SCENARIOS:
        path = tmp / f"{scenario}.html"
        proc = run_cli("demo", "--scenario", scenario, "--report", str(path), "--timeout", "30", timeout=120, cwd=tmp)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out[scenario] = path.read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_html_report_fits_the_viewport(reports: dict[str, str], scenario: str, width: int, tmp_path: Path) -> None:
    m = measure(reports[scenario], width, tmp_path)
    assert m["clientWidth"] == width, m  # the iframe really is the viewport we asked for
    assert m["scrollWidth"] <= m["clientWidth"], f"the page is wider than the window at {width} px: {m}"
    assert not m["wide"], f"elements stick out of the page at {width} px: {m['wide']}"
    if width <= 400:  # on a phone every table is a stack of cards: nothing needs sideways scrolling
        assert m["scrolling_boxes"] == 0, m
    shots = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    screenshot(reports[scenario], width, min(int(m["height"]) + 20, 8000), shots / f"{scenario}-{width}.png", tmp_path)
