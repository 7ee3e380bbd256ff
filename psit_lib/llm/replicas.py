"""Choosing among several replicas of one served model: least busy, healthy first.

A fleet of OpenAI-compatible servers behind no router: each model has one or more base URLs.
A call goes to the replica with the fewest calls in flight among those not cooling down; a
replica that refused a connection or timed out cools down for a while, so the next attempt
fails over to another one. Where to send a call never changes what is cached: cache keys name
the model and the request, not the replica.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

COOLDOWN_SECONDS = 10.0
"""How long a replica that refused a connection or timed out is passed over."""


class ReplicaPool:
    """The base URLs serving one model, with their load and health."""

    def __init__(self, urls: Sequence[str], *, cooldown: float = COOLDOWN_SECONDS, clock=time.monotonic) -> None:
        if not urls:
            raise ValueError("a replica pool needs at least one base URL")
        self.urls = tuple(urls)
        self.cooldown = cooldown
        self._clock = clock
        self._in_flight = {url: 0 for url in self.urls}
        self._down_until = {url: 0.0 for url in self.urls}

    def pick(self) -> str:
        """The least-busy healthy replica (list order breaks ties); if all cool down, the one
        that comes back first."""
        now = self._clock()
        healthy = [u for u in self.urls if self._down_until[u] <= now]
        if not healthy:
            return min(self.urls, key=lambda u: self._down_until[u])
        return min(healthy, key=lambda u: (self._in_flight[u], self.urls.index(u)))

    def acquire(self) -> str:
        url = self.pick()
        self._in_flight[url] += 1
        return url

    def release(self, url: str, *, failed: bool = False) -> None:
        self._in_flight[url] -= 1
        if failed:
            self._down_until[url] = self._clock() + self.cooldown

    def healthy_count(self) -> int:
        now = self._clock()
        return sum(self._down_until[u] <= now for u in self.urls)
