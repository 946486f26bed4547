"""Pages end: a next link, cursor or token that repeats ends its list as partial, naming the loop,
and a page count past the platform's bound is refused, whatever the answers say.

Each crawl is the real one, answered by the fault server from the platform's recorded snapshot with
one answer changed (answer_changes.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reliability.answer_changes import changed_json, served_crawl
from reliability.faults import snapshot
from scrapers.replay import Exchange, Snapshot
from scrapers.spiders.linode import LinodeSpider
from scrapers.spiders.vultr import VultrSpider

pytestmark = pytest.mark.faults

AZURE_PAGE_2 = "$skip=1000"


def test_azure_next_page_link_that_repeats_ends_the_list(tmp_path: Path) -> None:
    """Before: page 2 naming itself as the next page ran 747 requests in under a minute, and for
    ever under a plain `scrapy crawl`."""

    def is_page_2(exchange: Exchange) -> bool:
        return AZURE_PAGE_2 in exchange.url

    page_2 = next(e for e in snapshot("azure").exchanges if is_page_2(e))
    summary, server = served_crawl(
        tmp_path, "azure", changed_json(is_page_2, lambda page: {**page, "NextPageLink": page_2.url})
    )

    assert sum("skip" in hit.path for hit in server.hits) == 1, "page 2 asked once"
    assert summary.status == "partial"
    assert "page 3 is asked by a NextPageLink followed before" in summary.stats["partial"]
    assert "a loop; the rest of this list is not read" in summary.stats["partial"]
    assert summary.stats["errors"] == []
    assert summary.items_yielded > 0


class _CursorBlind(Snapshot):
    """Answers a page asked with any `cursor` as the list's first page: a platform whose cursor
    leads back to where it was."""

    def find(self, method: str, url: str, body: bytes | str | None, headers: Any = None) -> Exchange | None:
        return super().find(method, url.split("&cursor=")[0], body, headers)


def test_vultr_cursor_that_repeats_ends_the_list(tmp_path: Path) -> None:
    """Before: a cursor that repeats ran 4,823 requests in under a minute."""
    recorded = snapshot("vultr")
    blind = _CursorBlind(recorded.folder, recorded.meta, recorded.exchanges)
    summary, server = served_crawl(
        tmp_path,
        "vultr",
        changed_json(lambda e: "/plans?" in e.url, lambda page: {**page, "meta": {"links": {"next": "c2"}}}),
        recorded=blind,
    )

    cursor_hits = [hit for hit in server.hits if "cursor=c2" in hit.path]
    assert len(cursor_hits) == 1
    assert summary.status == "partial"
    assert "by a cursor followed before (c2): a loop" in summary.stats["partial"]
    assert summary.items_yielded > 0
    assert VultrSpider.max_pages < 20


def test_a_page_count_over_the_bound_is_refused(tmp_path: Path) -> None:
    """Before: Linode's `pages: 1000000` queued 999,999 requests (about 1 GB)."""
    summary, server = served_crawl(
        tmp_path, "linode", changed_json(lambda e: True, lambda page: {**page, "pages": 1_000_000})
    )

    assert len(server.hits) == 1
    assert summary.status == "partial"
    assert summary.stats["partial"] == (
        "https://api.linode.com/v4/linode/types says 1,000,000 pages, more than the "
        f"{LinodeSpider.max_pages} linode is bounded to: only its first page is read"
    )
    assert summary.items_yielded > 0


def test_alicloud_next_token_that_repeats_ends_the_type_list_and_prices_what_it_read(tmp_path: Path) -> None:
    """Before: a NextToken that repeats ran 5,668 requests in under a minute, and nothing was priced."""
    first_token = "e71d8a535bd9cc11"  # page 1's NextToken in the recording
    summary, server = served_crawl(
        tmp_path,
        "alicloud",
        changed_json(lambda e: first_token in e.url, lambda page: {**page, "NextToken": first_token}),
    )

    assert sum(first_token in hit.path for hit in server.hits) == 1
    assert summary.status == "partial"
    assert "by a NextToken followed before (e71d8a535bd9cc11): a loop" in summary.stats["partial"]
    assert summary.items_yielded > 0, "the types read are still priced"
