"""Numbers reported by the BASIS study (SPEC §7), for labelled comparison rows only.

They are never used as results: tables show them beside measured rows, labelled as the
reference study's reported values.
"""

from __future__ import annotations

# BASIS success rates: scenario -> (baseline, BASIS).
BASIS_SUCCESS = {"premium_bias": (0.35, 0.87), "quote_only_vs_book": (0.42, 0.56),
                 "stale_locations": (0.20, 0.74)}
BASIS_MEAN_RELIABILITY = (0.32, 0.72)
