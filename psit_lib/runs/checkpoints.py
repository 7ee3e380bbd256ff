"""Where the agents' LangGraph checkpoints live.

The fork test's agents and the BASIS agents are compiled LangGraph graphs whose state after each turn is a
checkpoint of LangGraph's own checkpointer, on one thread per episode. By default that is an
``InMemorySaver`` per episode (the study's ``MemorySaver``): the checkpoints live as long as the
episode's agent, and nothing is written to disk. With ``PSIT_CHECKPOINTS=sqlite`` a notebook keeps
them in its folder, ``checkpoints.sqlite`` (LangGraph's own SQLite saver), so that after the run an
episode can be opened at any turn, or forked again, with LangGraph's API (:func:`open_checkpoints`).
Keeping them changes no model call and no record: it is not part of a run's identity. It is off
by default because it costs harness CPU (about 0.8 ms per agent turn, measured) and disk (the
default series' folder tripled).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from psit_lib.llm.errors import ConfigurationError

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

CHECKPOINTS_ENV = "PSIT_CHECKPOINTS"
CHECKPOINT_FILE = "checkpoints.sqlite"
CheckpointMode = Literal["memory", "sqlite"]
_MODES: tuple[CheckpointMode, ...] = ("memory", "sqlite")

_KEPT: ContextVar[BaseCheckpointSaver | None] = ContextVar("psit_kept_checkpoints", default=None)


def checkpoint_mode(env: Mapping[str, str] | None = None) -> CheckpointMode:
    """``memory`` (the default) or ``sqlite``, from ``PSIT_CHECKPOINTS``; a bad value is one sentence."""
    value = ((os.environ if env is None else env).get(CHECKPOINTS_ENV) or "memory").strip().lower()
    if value not in _MODES:
        raise ConfigurationError(f"{CHECKPOINTS_ENV}={value!r} is not a checkpoint store; use memory "
                                 "(the default) or sqlite (kept in each notebook folder's checkpoints.sqlite)")
    return value


def episode_checkpointer() -> BaseCheckpointSaver:
    """The saver an episode's agent graph writes to: the notebook's on-disk saver while
    :func:`kept_checkpoints` holds one, else a fresh in-memory saver of the episode's own."""
    kept = _KEPT.get()
    if kept is not None:
        return kept
    from langgraph.checkpoint.memory import InMemorySaver

    return InMemorySaver()


def is_kept(saver: BaseCheckpointSaver) -> bool:
    """Whether ``saver`` is shared by the notebook's episodes (on disk), not an episode's own."""
    return saver is _KEPT.get()


@contextmanager
def sharing(saver: BaseCheckpointSaver) -> Iterator[BaseCheckpointSaver]:
    """Within this block, every agent built writes its checkpoints to ``saver``."""
    token = _KEPT.set(saver)
    try:
        yield saver
    finally:
        _KEPT.reset(token)


@asynccontextmanager
async def kept_checkpoints(folder: Path) -> AsyncIterator[BaseCheckpointSaver | None]:
    """While a notebook's episodes run: with ``PSIT_CHECKPOINTS=sqlite`` every episode's agent
    writes to ``folder/checkpoints.sqlite`` (yielded); otherwise nothing is kept (None)."""
    if checkpoint_mode() != "sqlite":
        yield None
        return
    async with open_checkpoints(folder) as saver:
        with sharing(saver):
            yield saver


@asynccontextmanager
async def open_checkpoints(folder: str | Path) -> AsyncIterator[BaseCheckpointSaver]:
    """LangGraph's SQLite saver over a notebook folder's ``checkpoints.sqlite`` (made if missing).
    Synchronous commits are relaxed (WAL, ``synchronous=NORMAL``): a crash may lose the last
    checkpoints, never corrupt the file, and the records stay the run's account."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = Path(folder) / CHECKPOINT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        await saver.setup()
        await saver.conn.execute("PRAGMA synchronous=NORMAL")
        yield saver


def checkpoints_file(folder: str | Path) -> Path:
    """A notebook folder's checkpoint file; one sentence if the run did not keep its checkpoints."""
    path = Path(folder) / CHECKPOINT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{Path(folder).name} kept no checkpoints ({path} is missing); run it with "
                                f"{CHECKPOINTS_ENV}=sqlite to open its episodes at any turn")
    return path
