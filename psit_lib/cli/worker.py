"""One notebook of a parallel run (``psit run -j N``), executed in a process of its own.

``python -m psit_lib.cli.worker ORDER`` runs the order ``psit run`` wrote as a sequential run does and
writes its summary as JSON; SIGTERM is handled as an interrupt (exit 143, 130 for SIGINT).
"""

from __future__ import annotations

import json
import pickle
import sys
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str]) -> int:
    from psit_lib.cli.execute import run_notebook
    from psit_lib.cli.signals import terminate_as_interrupt

    with open(argv[0], "rb") as f:
        order = pickle.load(f)  # written by this package's own psit run, in a private folder
    try:
        with terminate_as_interrupt():
            summary = run_notebook(Path(order["notebook"]), order["params"], Path(order["run_dir"]))
    except KeyboardInterrupt as exc:
        return int(getattr(exc, "exit_status", 130))
    Path(order["result"]).write_text(json.dumps(asdict(summary)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
