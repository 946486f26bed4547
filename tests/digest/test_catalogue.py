"""The digest's catalogues (digest/catalogues/*.po): the same keys in every language, every key the code
and templates use, the same fields in each translation, and a clear error for an unknown language."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import get_args

import pytest

from digest.catalogue import LANGUAGES, UnknownLanguage, read_catalogue, words
from digest.changes import NEW_SIDE_KINDS, REASON_KINDS
from scrapers.items import BillingPeriod, PricingType
from scrapers.registry import platforms
from warehouse.daily_plans import RANKINGS

# Every ranking a best plan can have (best_plans: the daily ones, the retired one days planned before
# 'lowest_run_total' keep, a job's) and every measure one can store (definitions/00_ranked_plans.sql,
# migration 095, definitions/00_best_plans.sql).
ALL_RANKINGS = (*RANKINGS, "lowest_cost_per_btoken", "lowest_total")
MEASURES = ("commitment_usd", "total_usd", "cost_usd_per_billion_tokens")

DIGEST = Path(__file__).resolve().parents[2] / "digest"


def _messages(lang: str) -> dict[str, tuple[str, ...]]:
    """key -> its translations (one, or one per plural form)."""
    catalog = read_catalogue(lang)
    found = {}
    for message in catalog:
        if not message.id:
            continue  # the header
        key = message.id if isinstance(message.id, str) else message.id[0]
        found[key] = (message.string,) if isinstance(message.string, str) else tuple(message.string)
    return found


CATALOGUES = {lang: _messages(lang) for lang in LANGUAGES}


def test_every_language_has_the_same_keys():
    english = set(CATALOGUES["en"])
    assert english, "no messages read"
    for lang, messages in CATALOGUES.items():
        assert set(messages) == english, lang


def test_every_message_is_translated_with_the_same_fields():
    def fields(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    for key, english in CATALOGUES["en"].items():
        for lang, messages in CATALOGUES.items():
            assert all(form.strip() for form in messages[key]), f"{lang} {key}: empty"
            for form in messages[key]:
                assert fields(form) == fields(english[-1]), f"{lang} {key}: {form!r}"


def test_plural_messages_are_plural_in_every_language():
    plural = {key for key, forms in CATALOGUES["en"].items() if len(forms) > 1}
    assert "count.plan_change" in plural
    for lang in LANGUAGES:
        catalog = read_catalogue(lang)
        assert {key for key in plural if not isinstance(catalog[key].id, tuple)} == set(), lang
        assert all(len(CATALOGUES[lang][key]) == catalog.num_plurals for key in plural), lang


def _keys_in_use() -> set[str]:
    """Keys written out in the code and templates: t("..."), tn("..."), text_heading("...", "...")."""
    used = set()
    sources = [*DIGEST.rglob("*.py"), *(DIGEST / "templates").iterdir()]
    for path in sources:
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'\.tn?\(\s*"([a-z_.A-Z]+)"(?=\s*[,)])', text))
        for first, second in re.findall(
            r'text_heading\(\s*"([a-z_.]+)"(?=\s*[,)])(?:,\s*"([a-z_.]+)")?', text
        ):
            used |= {first, second} - {""}
    return used


def _keys_built() -> set[str]:
    """Keys the code builds from a name (f"reason.{kind}", name("ranking", ...)): every value they take."""
    return {
        *(f"reason.{kind}" for kind in REASON_KINDS),
        *(f"cause.{kind}" for kind in NEW_SIDE_KINDS),
        *(f"ranking.{ranking}" for ranking in ALL_RANKINGS),
        *(f"measure.{measure}" for measure in MEASURES),
        *(f"plans.{ranking}" for ranking in (*RANKINGS, "lowest_cost_per_btoken")),
        *(f"billing.{period}" for period in get_args(BillingPeriod)),
        *(f"pricing.{kind}" for kind in get_args(PricingType)),
        *(
            f"status.{status}"
            for status in (
                "failed",
                "partial",
                "skipped",
                "not_crawled",
                "dated_out",
                "no_offer_fits",
                "drift",
            )
        ),
        *(f"watch.now.{kind}" for kind in ("price", "stock", "job")),
        *(f"chart.axis.{currency}" for currency in ("USD", "CNY")),
        *(f"push.title.{kind}" for kind in ("summary", "watches", "plan_changes", "failures", "test")),
        # Wording.platform: a platform's name where its readers know it by another (恒源云)
        *(key for key in CATALOGUES["en"] if key.startswith("platform.") and key[9:] in platforms()),
    }


def test_every_key_in_use_is_in_the_catalogues_and_none_is_unused():
    used = _keys_in_use()
    assert {"title", "heading.watches", "reason.none_fits"} & used, "the key pattern is out of date"
    wanted = used | _keys_built()
    assert wanted - set(CATALOGUES["en"]) == set()
    assert set(CATALOGUES["en"]) - wanted == set()


def test_chart_labels_are_latin_script():
    """matplotlib's bundled font has no CJK glyphs: a Chinese axis label would draw as boxes."""
    for messages in CATALOGUES.values():
        for key in ("chart.axis.USD", "chart.axis.CNY", "chart.date_format"):
            assert messages[key][0].isascii(), key


def test_an_unknown_language_and_an_unknown_key_are_clear_errors():
    with pytest.raises(UnknownLanguage, match="GPUPLAN_DIGEST_LANG takes en or zh"):
        words("fr")
    with pytest.raises(KeyError, match=r"no message 'heading\.nothing' in the en digest catalogue"):
        words("en").t("heading.nothing")


def test_chinese_plurals_have_one_form_and_english_two():
    assert words("en").tn("count.plan_change", 1) == "1 plan change"
    assert words("en").tn("count.plan_change", 2) == "2 plan changes"
    assert words("zh").tn("count.plan_change", 1) == "1 项方案变化"
    assert words("zh").tn("count.plan_change", 2) == "2 项方案变化"


def test_chinese_readers_get_the_platforms_chinese_names():
    """As the README's platform table names them; English keeps the slugs."""
    zh, en = words("zh"), words("en")
    assert [zh.t(f"platform.{slug}") for slug in ("gpushare", "matpool", "compshare", "ppio")] == [
        "恒源云",
        "矩池云",
        "优云智算",
        "派欧云",
    ]
    assert en.t("platform.gpushare") == "gpushare"
