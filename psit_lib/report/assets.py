"""The files a report's pages share instead of each carrying its own copy: the table library (itables, about
1 MB), the notebook stylesheet (about 0.3 MB), figures (one file each, the index's thumbnails included) and the
episode explorers' chunks.

Every file is loadable from a page opened as ``file://`` with no server: scripts are classic scripts
(``<script src>``; a module or a ``fetch()`` of a local file is refused there), stylesheets ``<link>``s,
figures ``<img src>``. Names are content hashes where pages share a file, so a file is written once
however many pages use it.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import shutil
from pathlib import Path

FOLDERS = ("assets", "figures", "episodes")
"""The report folder's subfolders this module writes (cleared before a report is rendered again)."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def small_png(png: bytes) -> bytes:
    """A figure as a palette PNG (256 colours): a chart's flat colours and their anti-aliasing survive,
    at about a third of the bytes; an image that is already a palette PNG is kept."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        if image.mode == "P":
            return png
        out = io.BytesIO()
        image.convert("RGB").quantize(256).save(out, format="PNG", optimize=True)
    return out.getvalue() if out.tell() < len(png) else png


class ReportAssets:
    """The shared files of one report folder ``out``; each method returns the path to use in a page
    of that folder (relative to it)."""

    def __init__(self, out: Path) -> None:
        self.out = out

    def clear(self) -> None:
        """Forget the files of an earlier rendering (figures and chunks no page names any more)."""
        for name in FOLDERS:
            shutil.rmtree(self.out / name, ignore_errors=True)

    def write(self, name: str, data: str | bytes) -> str:
        """``data`` as the file ``name`` (a path under the report folder)."""
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if not path.exists() or path.read_bytes() != raw:
            path.write_bytes(raw)
        return name

    def shared(self, folder: str, suffix: str, data: str | bytes) -> str:
        """``data`` under a name made from its content: pages that share it share one file."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        return self.write(f"{folder}/{_digest(raw)}{suffix}", raw)

    def figure(self, png: bytes) -> str:
        """A figure's file (the same figure on two pages is one file)."""
        name = f"figures/{_digest(png)}.png"
        if not (self.out / name).exists():
            self.write(name, small_png(png))
        return name

    def stylesheet(self, css: str) -> str:
        return self.shared("assets", ".css", css)

    def itables_script(self) -> str:
        """itables' offline loader (its JavaScript and CSS in one script) as one file every page of
        the report links, named by version: stored gzip-compressed (a third of the bytes) and run
        once decoded in the page, where it loads the library as in a notebook."""
        import itables

        text = itables_init()
        loader = text[text.index("<script>") + len("<script>"):text.index("</script>")]
        packed = base64.b64encode(gzip.compress(loader.encode("utf-8"), 9, mtime=0)).decode("ascii")
        return self.write(f"assets/itables-{itables.__version__}.js", _UNPACK % json.dumps(packed))


_UNPACK = """(function () {
  var bytes = Uint8Array.from(atob(%s), function (c) { return c.charCodeAt(0); });
  new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text().then(function (code) {
    var script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
  });
})();
"""
"""A classic script that decodes a gzip-compressed script and runs it."""


def itables_init() -> str:
    """itables' JavaScript and CSS, embedded in one ``<script>`` (no network): a notebook output's
    copy; a report page links the report folder's one copy (:meth:`ReportAssets.itables_script`)."""
    import itables
    from itables.javascript import generate_init_offline_itables_html

    return generate_init_offline_itables_html(Path(itables.__file__).parent / "html" / "dt_bundle.js")


__all__ = ["FOLDERS", "ReportAssets", "itables_init", "small_png"]
