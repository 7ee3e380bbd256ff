"""Choosing among the replicas of one served model: least busy, healthy first, within slots.

A call that finds every replica's slots taken waits here, in the client (earlier episodes
first), and its timeout starts only when it is sent: without slots it would wait in the server's
queue, where waiting counts against its timeout and a small server times out calls that never
started. A replica that reports no slots is sized by what it does instead (``adaptive``): its calls
in flight halve when replies queue towards their timeout and grow back by one per round of
replies that come back in time. A replica that refused a connection cools down; timeouts cool one
down only when there is another to fail over to. Where a call goes never changes what is cached.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
import time
from collections.abc import Mapping, Sequence
from contextvars import ContextVar

COOLDOWN_SECONDS = 10.0
"""How long a replica that refused a connection (or timed out repeatedly) is passed over."""

TIMEOUTS_BEFORE_COOLDOWN = 2
"""Consecutive timeouts after which a replica of several is passed over for a while."""

QUEUE_SHARE = 0.5
"""A reply that took more than this share of its timeout counts as queueing (as a timeout does): on a
server that reports no slots, calls in flight are then cut."""

CUT_FACTOR = 0.5
"""The multiplicative decrease of an adaptive limit (at most once per round of calls)."""

log = logging.getLogger("psit_lib.llm")

EPISODE_RANK: ContextVar[int] = ContextVar("psit_episode_rank", default=0)
"""The order in which the calling episode started (set by the runner): waiting calls of earlier
episodes get a free slot first, so a 2-slot server finishes episodes one after another instead of
all 16 in flight together at the end (a real 02 run had 0 of 16 done after 50 minutes)."""


class ReplicaPool:
    """The base URLs serving one model, with their load, free slots and health."""

    def __init__(self, urls: Sequence[str], *, slots: int | Mapping[str, int | None] | None = None,
                 adaptive: Mapping[str, int] | None = None, cooldown: float = COOLDOWN_SECONDS,
                 clock=time.monotonic) -> None:
        """``slots``: one count for every replica, or a count per URL (a URL not named, or
        named with None, has no limit). ``adaptive``: replicas without slots whose calls in flight
        follow what they do (AIMD), each starting at, and never above, the count given."""
        if not urls:
            raise ValueError("a replica pool needs at least one base URL")
        self.urls = tuple(urls)
        per_url = dict(slots) if isinstance(slots, Mapping) else {}
        self._slots = {url: per_url.get(url) if isinstance(slots, Mapping) else slots for url in self.urls}
        if any(n is not None and n < 1 for n in self._slots.values()):
            raise ValueError("a replica needs at least one slot")
        self.cooldown = cooldown
        self._clock = clock
        self._in_flight = {url: 0 for url in self.urls}
        self._down_until = {url: 0.0 for url in self.urls}
        self._timeouts = {url: 0 for url in self.urls}
        self._waiters: list[tuple[int, int, asyncio.Future[str]]] = []  # a heap: (episode rank, arrival, call)
        self._arrivals = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._ceiling = {url: n for url, n in (adaptive or {}).items() if url in self._slots and self._slots[url] is None}
        if any(n < 1 for n in self._ceiling.values()):
            raise ValueError("an adaptive replica needs at least one call in flight")
        self._limit = {url: float(n) for url, n in self._ceiling.items()}
        self._cut_at = {url: -math.inf for url in self._ceiling}

    # -- choosing ------------------------------------------------------------------------
    def _has_room(self, url: str) -> bool:
        limit = self.limit_of(url)
        return limit is None or self._in_flight[url] < limit

    def slots_of(self, url: str) -> int | None:
        """Calls ``url`` runs at once, as reported or set (None: not known)."""
        return self._slots[url]

    def limit_of(self, url: str) -> int | None:
        """Calls in flight ``url`` may have now: its slots, else its adaptive limit (None: no limit)."""
        if url in self._limit:
            return max(1, int(self._limit[url]))
        return self._slots[url]

    def now(self) -> float:
        """The pool's clock (what ``sent_at`` in :meth:`release` is measured on)."""
        return self._clock()

    def pick(self) -> str | None:
        """The least-busy healthy replica with a free slot (list order breaks ties). If every
        replica cools down, the one with a free slot that comes back first. None when the call
        has to wait: every healthy replica's slots are taken (or every replica's)."""
        now = self._clock()
        healthy = [u for u in self.urls if self._down_until[u] <= now]
        if healthy:
            free = [u for u in healthy if self._has_room(u)]
            return min(free, key=lambda u: (self._in_flight[u], self.urls.index(u))) if free else None
        free = [u for u in self.urls if self._has_room(u)]
        return min(free, key=lambda u: self._down_until[u]) if free else None

    async def slot(self) -> str:
        """A replica with a free slot, waiting until one frees (earlier episodes first, then in
        arrival order); the caller must :meth:`release` it. Cancelled while waiting, it takes no slot."""
        if not self._waiters:
            url = self.pick()
            if url is not None:
                self._in_flight[url] += 1
                return url
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (EPISODE_RANK.get(), next(self._arrivals), waiter))
        self._wake()  # arms the timer for a replica that comes back from a cooldown
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(waiter.result())  # handed a slot just as it was cancelled
            raise  # a cancelled waiter is dropped when it reaches the front

    def _wake(self) -> None:
        """Hand free slots to the waiting calls, earliest episode first; if calls still wait while a
        replica with room cools down, look again when it comes back."""
        while self._waiters:
            if self._waiters[0][2].done():  # cancelled meanwhile
                heapq.heappop(self._waiters)
                continue
            url = self.pick()
            if url is None:
                break
            self._in_flight[url] += 1
            heapq.heappop(self._waiters)[2].set_result(url)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._waiters:
            now = self._clock()
            returning = [self._down_until[u] for u in self.urls if self._down_until[u] > now and self._has_room(u)]
            if returning:
                self._timer = asyncio.get_running_loop().call_later(min(returning) - now + 0.001, self._wake)

    # -- outcomes ------------------------------------------------------------------------
    def release(self, url: str, *, failed: bool = False, timed_out: bool = False, answered: bool = False,
                queued: bool = False, sent_at: float | None = None) -> bool:
        """The call at ``url`` ended: ``failed`` (refused) cools the replica down; ``timed_out``
        does when it is one of several and timed out ``TIMEOUTS_BEFORE_COOLDOWN`` times in a
        row; ``answered`` (the server replied, even with an error) clears its timeouts. On an
        adaptive replica a timeout, or an answer that ``queued`` (took more than ``QUEUE_SHARE`` of
        its timeout), cuts the calls in flight, once per round (calls sent before the last cut,
        at ``sent_at`` on :meth:`now`, do not cut again); an answer in time adds one per round.
        Returns whether the replica is now cooling down because of this call."""
        self._in_flight[url] -= 1
        if url in self._limit:
            self._adapt(url, timed_out or queued, answered, sent_at)
        if timed_out:
            self._timeouts[url] += 1
            failed = failed or (len(self.urls) > 1 and self._timeouts[url] >= TIMEOUTS_BEFORE_COOLDOWN)
        elif answered:
            self._timeouts[url] = 0
        if failed:
            self._down_until[url] = self._clock() + self.cooldown
            self._timeouts[url] = 0
        if self._waiters:
            self._wake()
        return failed

    def _adapt(self, url: str, congested: bool, answered: bool, sent_at: float | None) -> None:
        """Additive increase, multiplicative decrease of ``url``'s calls in flight; says so in one line
        when the count it allows changes by a cut, or is back at its ceiling."""
        before = self.limit_of(url)
        if congested:
            if sent_at is not None and sent_at < self._cut_at[url]:
                return  # sent before the last cut: that cut answered this round already
            self._limit[url] = max(1.0, self._limit[url] * CUT_FACTOR)
            self._cut_at[url] = self._clock()
            if self.limit_of(url) != before:
                log.warning("model server %s reports no slots and its replies queue towards their timeout: calls in "
                            "flight there lowered to %d (from %d); they grow back while replies come in time "
                            "(PSIT_ENDPOINT_CONCURRENCY fixes the count)", url, self.limit_of(url), before)
        elif answered and self._limit[url] < self._ceiling[url]:
            self._limit[url] = min(float(self._ceiling[url]), self._limit[url] + 1.0 / self._limit[url])
            if self.limit_of(url) == self._ceiling[url]:
                log.warning("model server %s: calls in flight there back at %d", url, self._ceiling[url])

    def healthy_count(self) -> int:
        now = self._clock()
        return sum(self._down_until[u] <= now for u in self.urls)

    def in_flight(self, url: str) -> int:
        return self._in_flight[url]
