"""A transcript browser for notebooks (ipywidgets), with a plain-text fallback headless."""

from __future__ import annotations

from typing import Any, Callable


def transcript_browser(records: list[dict[str, Any]], render: Callable[[dict[str, Any]], str],
                       failed: Callable[[dict[str, Any]], bool]):
    """A widget: filter (all / failed only), pick an episode, read its audit.

    Returns the widget (display it); without ipywidgets returns the first audit as text.
    """
    try:
        import ipywidgets as w
    except ImportError:  # pragma: no cover - ipywidgets is a dependency
        return render(records[0]) if records else "(no episodes)"
    only_failed = w.Checkbox(value=True, description="failed only")
    picker = w.Dropdown(description="episode", layout=w.Layout(width="70%"))
    view = w.HTML()

    def refresh(*_):
        chosen = [r for r in records if failed(r)] if only_failed.value else records
        picker.options = [(f"{r['episode_id']} ({r.get('outcome', 'error')})", i)
                          for i, r in enumerate(records) if r in chosen]
        show()

    def show(*_):
        if picker.value is None:
            view.value = "<i>no episodes match</i>"
            return
        import html

        view.value = f"<pre style='white-space: pre-wrap'>{html.escape(render(records[picker.value]))}</pre>"

    only_failed.observe(refresh, "value")
    picker.observe(show, "value")
    refresh()
    return w.VBox([w.HBox([only_failed, picker]), view])
