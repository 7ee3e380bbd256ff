"""Do two drawn texts overlap? The tests' check on :func:`psit_lib.analysis.labels.text_boxes`."""

from __future__ import annotations

import numpy as np


def overlapping_text(boxes: list[dict[str, object]], tolerance: float = 1.0) -> list[tuple[str, str]]:
    """The pairs of :func:`text_boxes` that overlap by more than ``tolerance`` pixels (tilted
    boxes are compared as drawn, not by the upright rectangles around them), each as
    ``("kind 'text'", "kind 'text'")``."""
    shapes = [np.asarray(b["corners"], dtype=float) for b in boxes]
    pairs = []
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            if _depth(shapes[i], shapes[j]) > tolerance:
                pairs.append(tuple(f"{boxes[k]['kind']} {boxes[k]['text']!r}" for k in (i, j)))
    return pairs  # type: ignore[return-value]


def _depth(a: np.ndarray, b: np.ndarray) -> float:
    """How far two convex quadrilaterals overlap along the axis where they overlap least
    (separating-axis test); 0 when apart."""
    depth = np.inf
    for shape in (a, b):
        for edge in np.diff(np.vstack([shape, shape[:1]]), axis=0):
            normal = np.array([-edge[1], edge[0]])
            length = np.hypot(*normal)
            if length == 0:
                continue
            pa, pb = a @ normal / length, b @ normal / length
            depth = min(depth, min(pa.max(), pb.max()) - max(pa.min(), pb.min()))
            if depth <= 0:
                return 0.0
    return float(depth)
