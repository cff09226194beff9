"""The server's garbage collector (application.collector, issue 15): what lives long is
frozen out of the full collections' walk, what a pass finds unreachable is reclaimed, and a
cycle that was frozen while alive waits for the hourly pass that collects everything."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from application.collector import Collector


class Node:
    """An object in a reference cycle (reference counting alone never frees it)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # the other tests' objects go back to the collector


def test_what_survives_a_pass_is_frozen_and_what_is_unreachable_is_reclaimed() -> None:
    collector = Collector()
    kept = Node()
    lost = weakref.ref(Node())
    collector.collect()
    assert lost() is None
    assert gc.get_freeze_count() > 0
    assert kept.me is kept


def test_a_cycle_frozen_while_alive_is_reclaimed_by_the_pass_that_collects_everything() -> None:
    collector = Collector()
    node = Node()
    ref = weakref.ref(node)
    collector.collect()  # frozen: alive at the pass
    del node
    collector.collect()
    assert ref() is not None  # the trade: not walked, so not found
    collector.collect(everything=True)
    assert ref() is None


def test_the_server_passes_on_its_event_loop_until_stopped() -> None:
    async def main() -> Collector:
        collector = Collector(every=0.01, thaw_every=0.03)
        collector.start()
        await asyncio.sleep(0.1)
        collector.stop()
        return collector

    collector = asyncio.run(main())
    assert collector.last is not None
    passes = collector.last
    collector.stop()  # twice: nothing more happens
    assert collector.last == passes
