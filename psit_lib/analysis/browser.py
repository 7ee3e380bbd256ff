"""A transcript browser for notebooks (ipywidgets), with a static fallback for reports.

In JupyterLab it is a widget: tick *failed only*, pick an episode, read its audit. In a
rendered report, where no kernel runs the widget, the same output carries a static version:
each failed episode's audit as a folded ``<details>`` block.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
STATIC_LIMIT = 20
"""Most failed episodes the static fallback shows (the widget browses all of them)."""


class WithStaticFallback:
    """A widget whose display also carries an HTML fallback for renderers without a kernel.

    Jupyter front ends show the widget; nbconvert's HTML export, which has no widget state,
    shows the ``text/html`` part instead.
    """

    def __init__(self, widget: Any, fallback_html: str) -> None:
        self.widget = widget
        self.fallback_html = fallback_html

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data = {**data, "text/html": self.fallback_html}
        return (data, bundle[1]) if isinstance(bundle, tuple) else data


def html_view(render: Callable[[T], str]) -> Callable[[T], str]:
    """How an episode is shown as HTML: the renderer's structured view when it has one (an
    ``html`` attribute, e.g. a study's episode view), else its text in a ``<pre>``."""
    structured = getattr(render, "html", None)
    if callable(structured):
        return structured
    return lambda record: f"<pre style='white-space: pre-wrap'>{html.escape(render(record))}</pre>"


def static_transcripts(records: Sequence[T], render: Callable[[T], str], failed: Callable[[T], bool],
                       label: Callable[[T], str], limit: int = STATIC_LIMIT) -> str:
    """HTML: the failed episodes' audits, one folded block each (at most ``limit``)."""
    chosen = [r for r in records if failed(r)]
    if not chosen:
        return "<p><i>No failed episodes to show.</i></p>"
    view = html_view(render)
    blocks = [f"<details><summary>{html.escape(label(r))}</summary>{view(r)}</details>" for r in chosen[:limit]]
    more = f"<p><i>… and {len(chosen) - limit} more in the run folder.</i></p>" if len(chosen) > limit else ""
    return f"<p><b>Failed episodes ({len(chosen)})</b></p>" + "".join(blocks) + more


def transcript_browser(records: Sequence[T], render: Callable[[T], str], failed: Callable[[T], bool],
                       label: Callable[[T], str] = lambda r: str(getattr(r, "episode_id", r))):
    """A widget: filter (all / failed only), pick an episode, read its audit; the first matching
    episode is shown at once. Without ipywidgets, the static HTML of the failed episodes."""
    fallback = static_transcripts(records, render, failed, label)
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a dependency
        from IPython.display import HTML

        return HTML(fallback)
    only_failed = w.Checkbox(value=True, description="failed only")
    picker = w.Dropdown(description="episode", layout=w.Layout(width="70%"))
    view = w.HTML()
    as_html = html_view(render)

    def show(*_):
        if picker.value is None:
            view.value = "<i>no episodes match</i>"
            return
        view.value = as_html(records[picker.value])

    def refresh(*_):
        options = [(label(r), i) for i, r in enumerate(records) if not only_failed.value or failed(r)]
        picker.options = options
        picker.value = options[0][1] if options else None
        show()

    only_failed.observe(refresh, "value")
    picker.observe(show, "value")
    refresh()
    return WithStaticFallback(w.VBox([w.HBox([only_failed, picker]), view]), fallback)
