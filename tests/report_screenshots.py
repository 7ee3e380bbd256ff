"""Screenshots of a rendered report, as a reader sees it at 1400 px (headless Chromium).

``python tests/report_screenshots.py <report folder> <output folder>`` writes one PNG per
page (index first): the top :data:`HEIGHT` pixels at :data:`WIDTH` px, reduced to a 256-colour
palette so the images stay small enough to keep in the repository (``docs/screenshots/``).
Each page's width is printed, so a page that scrolls sideways is seen at once.
``python tests/report_screenshots.py page <page.html> <image.png>`` shoots one page (the compare
page, the list of runs); ``... explorer <page.html> <image.png>`` the episode explorer of a page with
its first episode opened (a fourth argument: a search that chooses the episode).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

WIDTH = 1400
HEIGHT = 2000
PAGE_WIDTH_JS = ("(() => { const all = [...document.querySelectorAll('body *')];"
                 " const boxes = all.filter(e => ['auto', 'scroll', 'hidden'].includes(getComputedStyle(e).overflowX));"
                 " return Math.round(Math.max(document.documentElement.scrollWidth, ...all"
                 ".filter(e => !boxes.some(b => b !== e && b.contains(e))).map(e => e.getBoundingClientRect())"
                 ".filter(r => r.width > 0).map(r => r.right))); })()")
"""A page's width as a reader meets it: the right edge of its widest element, a wide table that
scrolls inside its own box (an output area, the head) excepted: the page itself does not scroll."""


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        raise SystemExit("No Chromium found: install it (apt-get install -y chromium).")
    return path


def pages(report: Path) -> list[Path]:
    """The index first, then each notebook's page, then any other page (the protocol)."""
    rest = sorted(p for p in report.glob("*.html") if p.name != "index.html")
    return [report / "index.html", *(p for p in rest if p.name[:1].isdigit()),
            *(p for p in rest if not p.name[:1].isdigit())]


def shoot(report: Path, out: Path, *, width: int = WIDTH, height: int = HEIGHT) -> list[tuple[Path, int]]:
    """Write the screenshots; returns (image, page width in px) per page."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    shots = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        for html_page in pages(report):
            page.goto(html_page.as_uri())
            page_width = int(page.evaluate(PAGE_WIDTH_JS))
            full = int(page.evaluate("document.documentElement.scrollHeight"))
            image = out / f"{html_page.stem}.png"
            page.screenshot(path=str(image), full_page=True,
                            clip={"x": 0, "y": 0, "width": width, "height": min(height, full)})
            Image.open(image).convert("RGB").quantize(256).save(image, optimize=True)
            shots.append((image, page_width))
        browser.close()
    return shots


def _save(page: object, image: Path, clip: dict[str, float]) -> None:
    from PIL import Image

    page.screenshot(path=str(image), full_page=True, clip=clip)  # type: ignore[attr-defined]
    Image.open(image).convert("RGB").quantize(256).save(image, optimize=True)


def shoot_one(html_page: Path, image: Path, *, explorer: bool = False, search: str = "", width: int = WIDTH,
              height: int = HEIGHT) -> int:
    """One page (or, with ``explorer``, its episode explorer with the first episode matching
    ``search`` open) as a PNG; returns the page's width in px."""
    from playwright.sync_api import sync_playwright

    image.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.goto(html_page.as_uri())
        page_width = int(page.evaluate(PAGE_WIDTH_JS))
        top = 0.0
        if explorer:
            page.wait_for_selector(".psit-explorer table.dataTable tbody tr")
            if search:
                page.locator(".psit-explorer .dt-search input").press_sequentially(search)
            page.locator(".psit-explorer table.dataTable tbody tr").first.click()
            box = page.locator(".psit-explorer").bounding_box()
            top = box["y"] + page.evaluate("window.scrollY") if box else 0.0
        full = int(page.evaluate("document.documentElement.scrollHeight"))
        _save(page, image, {"x": 0, "y": top, "width": width, "height": min(height, full - top)})
        browser.close()
    return page_width


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) in (3, 4) and args[0] in ("page", "explorer"):
        width = shoot_one(Path(args[1]), Path(args[2]), explorer=args[0] == "explorer",
                          search=args[3] if len(args) == 4 else "")
        print(f"{args[2]} · page width {width} px{'' if width <= WIDTH else ' (scrolls sideways)'}")
        return 0
    if len(args) != 2:
        print("usage: python tests/report_screenshots.py <report folder> <output folder>", file=sys.stderr)
        return 2
    for image, page_width in shoot(Path(args[0]), Path(args[1])):
        print(f"{image} · page width {page_width} px{'' if page_width <= WIDTH else ' (scrolls sideways)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
