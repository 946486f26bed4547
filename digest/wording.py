"""The digest's facts in words of one language: numbers, plans, reasons, watches, the summary line.

The HTML and text templates and `--json` all take their sentences from here, so the three can
never say different things. Chinese puts CNY first (the currency AutoDL, 恒源云 and 矩池云 quote in),
English USD; both show the other in brackets where the plans carry it.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from babel.numbers import format_compact_decimal

from config.shown_text import one_line
from config.watches_file import JobWatch, PriceWatch, StockWatch
from digest.catalogue import PRIMARY_CURRENCY, Words, words
from digest.changes import NEW_SIDE_KINDS, Cause, ChangedPlan, PlanSide, Reason
from digest.chart import ChartLine
from digest.content import (
    CheckWarning,
    CrawlFailure,
    Digest,
    ExcludedOffer,
    PlanLine,
    PriceMove,
    StockChange,
)
from digest.watches import WatchReading, WatchResult

NO_VALUE = "–"  # shown for a missing number; never "0", which would read as free
SYMBOLS = {"USD": "$", "CNY": "¥"}


def amount(value: float | None, currency: str = "USD") -> str:
    """'$1,234' for large amounts, '$12.34' below 100, '$0.245' below 1 (GPU-hour prices)."""
    if value is None:
        return NO_VALUE
    symbol = SYMBOLS[currency]
    if abs(value) >= 100:
        return f"{symbol}{value:,.0f}"
    if abs(value) >= 1:
        return f"{symbol}{value:.2f}"
    return f"{symbol}{value:.3f}"


def pct(value: float | None) -> str:
    return NO_VALUE if value is None else f"{value:+.1f}%"


def gpus(gpu_model: str | None, gpu_count: int | None) -> str:
    if gpu_model is None:
        return NO_VALUE
    return gpu_model if gpu_count is None else f"{gpu_model} x {gpu_count}"


def pad(value: object, width: int) -> str:
    """Left-justify to `width` terminal columns; CJK characters take two (矩池云 is 6 wide)."""
    text = str(value)
    used = sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
    return text + " " * max(width - used, 0)


# An offer id longer than this (a UUID with its shape) is cut in a change line: it tells two apart.
OFFER_ID_SHOWN = 16


def _short(offer_id: str | None) -> str:
    text = oneline(offer_id)
    return text if len(text) <= OFFER_ID_SHOWN else text[: OFFER_ID_SHOWN - 1] + "…"


def oneline(value: str | None) -> str:
    """Platform text (crawl errors) on one line and made safe, so it cannot break the plain-text
    layout nor drive a terminal (`config.shown_text.one_line`)."""
    return NO_VALUE if value is None else one_line(value)


@dataclass(frozen=True)
class Wording:
    """Sentences of one language. Methods return plain text: the HTML template escapes it."""

    words: Words

    @classmethod
    def of(cls, lang: str) -> Wording:
        return cls(words(lang))

    @property
    def lang(self) -> str:
        return self.words.lang

    def t(self, key: str, **values: object) -> str:
        return self.words.t(key, **values)

    def tn(self, key: str, n: int, **values: object) -> str:
        return self.words.tn(key, n, **values)

    def name(self, kind: str, value: str | None) -> str:
        """A machine name in words ('ranking', 'lowest_rent' -> 'lowest rent for a month'); a value
        the catalogue does not know (a new pricing type) is shown as itself, underscores as spaces."""
        if value is None:
            return NO_VALUE
        key = f"{kind}.{value}"
        return self.t(key) if self.words.has(key) else value.replace("_", " ")

    def platform(self, slug: str | None) -> str:
        """A platform as this language's readers know it (gpushare is 恒源云 in Chinese), else its
        slug; made safe like any platform-provided text."""
        if slug is None:
            return NO_VALUE
        key = f"platform.{slug}"
        return self.t(key) if self.words.has(key) else oneline(slug)

    # --- numbers ---------------------------------------------------------------------------

    def money(self, usd: float | None, cny: float | None) -> str:
        """The reader's currency first, the other in brackets: '$2,500 (¥18,000)' / '¥18,000 ($2,500)'."""
        first, second = (cny, usd) if PRIMARY_CURRENCY[self.lang] == "CNY" else (usd, cny)
        names = ("CNY", "USD") if PRIMARY_CURRENCY[self.lang] == "CNY" else ("USD", "CNY")
        if first is None:
            return amount(second, names[1])
        if second is None:
            return amount(first, names[0])
        return f"{amount(first, names[0])} ({amount(second, names[1])})"

    def money_one(self, usd: float | None, cny: float | None) -> str:
        """The reader's currency alone (the other where it is missing): '$2,500' / '¥18,000'."""
        if PRIMARY_CURRENCY[self.lang] == "CNY":
            return amount(cny, "CNY") if cny is not None else amount(usd, "USD")
        return amount(usd, "USD") if usd is not None else amount(cny, "CNY")

    def price(self, usd: float | None, cny: float | None) -> str:
        """A price per GPU-hour in the reader's currency: '$0.410/GPU-h' / '¥2.95/卡时'."""
        if PRIMARY_CURRENCY[self.lang] == "CNY" and cny is not None:
            return self.t("unit.per_gpu_hour", price=amount(cny, "CNY"))
        return self.t("unit.per_gpu_hour", price=amount(usd, "USD"))

    def months(self, value: float) -> str:
        return self.t("unit.months", months=f"{round(value, 1):g}")

    # --- the summary ----------------------------------------------------------------------

    def summary(self, digest: Digest) -> str:
        """'no changes', or the count of each kind of news: '2 plan changes, 1 failed crawl'."""
        if digest.is_quiet:
            return self.t("summary.none")
        counts = [
            (len(digest.fired_watches), self.tn("count.watch", len(digest.fired_watches))),
            (len(digest.plan_changes), self.tn("count.plan_change", len(digest.plan_changes))),
            (len(digest.price_moves), self.tn("count.price_move", len(digest.price_moves))),
            (len(digest.stock_changes), self.tn("count.stock_change", len(digest.stock_changes))),
            (len(digest.failed_crawls), self.tn("count.failed_crawl", len(digest.failed_crawls))),
        ]
        return self.t("summary.separator").join(said for n, said in counts if n)

    def subject(self, digest: Digest) -> str:
        return self.t("subject", day=digest.digest_date, summary=self.summary(digest))

    def headline(self, digest: Digest) -> str:
        summary = self.summary(digest)
        if digest.previous_date is None:
            return self.t("headline.first", summary=summary)
        if digest.is_quiet:
            return self.t("headline.quiet", day=digest.previous_date)
        return self.t("headline.news", day=digest.previous_date, summary=summary)

    def rent_today(self, digest: Digest) -> str:
        """The line the digest opens with: what to rent today for the first model and method that
        has a plan, by the least rent for a month (the article's view)."""
        plan = next((p for p in digest.plans if p.status == "ok" and p.ranking == "lowest_rent"), None)
        if plan is None:
            return self.t("rent_today.none")
        return self.t(
            "rent_today",
            model=plan.model,
            method=plan.method,
            gpus=gpus(plan.gpu_model, plan.gpu_count),
            platform=self.platform(plan.platform),
            rent=self.money_one(plan.rent_usd_per_month, plan.rent_cny_per_month),
        )

    # --- plan changes ---------------------------------------------------------------------

    def group_title(self, change: ChangedPlan) -> str:
        if change.job is not None:
            return self.t("group.job", job=change.job, model=change.model, method=change.method)
        return self.t("group.model", model=change.model)

    def change_title(self, change: ChangedPlan, *, under_cause: bool = False) -> str:
        """What changed: 'lora, lowest rent for a month' (a job's group title says the rest); under a
        shared cause, whose title names no model, with its model or job: '7B lora, lowest rent...'."""
        ranking = self.name("ranking", change.ranking)
        title = (
            ranking
            if change.job is not None
            else self.t("change.title", method=change.method, ranking=ranking)
        )
        if not under_cause:
            return title
        subject = self.group_title(change) if change.job is not None else change.model
        return self.t("change.title_under_cause", subject=subject, title=title)

    def change_line(self, change: ChangedPlan, *, under_cause: bool = False) -> str:
        """'lora, lowest rent for a month: thunder A100 SXM 80GB x 2, by the hour -> vastai ...', and
        where both are the same platform and GPU, what differs (`differs`)."""
        line = self.t(
            "change.line",
            title=self.change_title(change, under_cause=under_cause),
            old=self.plan(change.old),
            new=self.plan(change.new),
        )
        differs = self.differs(change)
        return self.t("differs.line", line=line, what=differs) if differs else line

    def differs(self, change: ChangedPlan) -> str:
        """What differs between two plans on the same platform and GPU, which their lines alone would
        show as the same: the offer, its region, its billing ('offer 2940 → 2941, region SE → JP');
        empty when the platform or GPU differ (or either side has no plan)."""
        old, new = change.old, change.new
        if not (old.ok and new.ok) or (old.platform, old.gpu_model) != (new.platform, new.gpu_model):
            return ""
        said = []
        if old.offer_id != new.offer_id:
            said.append(self.t("differs.offer", old=_short(old.offer_id), new=_short(new.offer_id)))
        if old.region != new.region and (old.region or new.region):
            said.append(self.t("differs.region", old=oneline(old.region), new=oneline(new.region)))
        if old.billing_period != new.billing_period:
            billing = {
                "old": self.name("billing", old.billing_period),
                "new": self.name("billing", new.billing_period),
            }
            said.append(self.t("differs.billing", **billing))
        elif old.pricing_type != new.pricing_type:
            pricing = {
                "old": self.name("pricing", old.pricing_type),
                "new": self.name("pricing", new.pricing_type),
            }
            said.append(self.t("differs.pricing", **pricing))
        return self.t("differs.separator").join(said)

    def cause(self, cause: Cause) -> str:
        """A cause several plans share, once: "vastai's RTX A4000 16GB, new at $0.083/GPU-h, now
        wins 6 plans"."""
        reason = cause.reason
        return self.tn(
            f"cause.{reason.kind}",
            len(cause.changes),
            platform=self.platform(reason.platform),
            gpu=reason.gpu_model or NO_VALUE,
            price=self.price(reason.usd_per_gpu_hour, reason.cny_per_gpu_hour),
            pct=pct(reason.pct_change),
            change=f"{abs(reason.pct_change or 0):.1f}%",
        )

    def plan(self, side: PlanSide) -> str:
        """'vastai A100 PCIe 80GB x 2, by the hour', or 'no plan'."""
        if not side.ok:
            return self.t("plan.none")
        machines = gpus(side.gpu_model, side.gpu_count)
        if side.fabric:  # a cluster plan says so: its nodes and what joins them
            machines = self.t("plan.cluster", gpus=machines, nodes=side.nodes, fabric=oneline(side.fabric))
        return self.t(
            "plan.side",
            platform=self.platform(side.platform),
            gpus=machines,
            billing=self.name("billing", side.billing_period),
        )

    def measure(self, change: ChangedPlan) -> str:
        """'total as billed $620 (¥4,464) -> $480 (¥3,456) (-22.6%)'."""
        return self.t(
            "change.measure",
            measure=self.name("measure", change.measure),
            old=self.money(change.old.measure_usd, change.old.measure_cny) if change.old.ok else NO_VALUE,
            new=self.money(change.new.measure_usd, change.new.measure_cny) if change.new.ok else NO_VALUE,
            pct=pct(change.pct_change),
        )

    def why(self, change: ChangedPlan, *, with_label: bool = True, under_cause: bool = False) -> str:
        """The reasons in one sentence: "vastai now offers A100 PCIe 80GB at $0.410/GPU-h; thunder's
        A100 SXM 80GB rose 12.0%". Empty when nothing is known beyond the measure. `under_cause`:
        the reason about the new offer is the shared cause's title, not said again."""
        reasons = [r for r in change.reasons if not (under_cause and r.kind in NEW_SIDE_KINDS)]
        said = self.t("why.separator").join(self.reason(reason, change) for reason in reasons)
        if not said or not with_label:
            return said
        return self.t("why.label", reasons=said)

    def reason(self, reason: Reason, change: ChangedPlan) -> str:
        return self.t(
            f"reason.{reason.kind}",
            platform=self.platform(reason.platform),
            gpu=reason.gpu_model or NO_VALUE,
            price=self.price(reason.usd_per_gpu_hour, reason.cny_per_gpu_hour),
            pct=pct(reason.pct_change),
            change=f"{abs(reason.pct_change or 0):.1f}%",
            gpus=NO_VALUE if reason.gpus is None else reason.gpus,
            day=change.previous_date or NO_VALUE,
        )

    # --- the day's plans and other sections -------------------------------------------------

    def plan_costs(self, plan: PlanLine) -> str:
        """'$2,500 a month, min. term 3 months: ...; $25.00 per billion tokens': the reader's currency
        alone, so a plan's line fits a phone (the minimum term's total says both)."""
        money = self.money_one
        rent = self.t("plan.a_month", rent=money(plan.rent_usd_per_month, plan.rent_cny_per_month))
        if plan.commitment_months:
            rent = self.t("plan.with_term", rent=rent, term=self.min_term(plan))
        per_btoken = money(plan.cost_usd_per_billion_tokens, plan.cost_cny_per_billion_tokens)
        return self.t(
            "plan.costs",
            rent=rent,
            run=self.run_total(plan),
            per_btoken=self.t("plan.per_btoken", cost=per_btoken),
        )

    def run_total(self, plan: PlanLine) -> str:
        """'$965 (¥6,950) for one run of 1B tokens, as billed'."""
        return self.t(
            "plan.run",
            total=self.money_one(plan.total_usd, plan.total_cny),
            tokens=self.tokens(plan.job_tokens),
        )

    def tokens(self, value: float | None) -> str:
        """A run's tokens as the reader's language writes them: '1B', '500M'; '10亿', '5亿'."""
        if value is None:
            return NO_VALUE
        return format_compact_decimal(value, format_type="short", locale=self.lang, fraction_digits=2)

    def min_term(self, plan: PlanLine) -> str:
        return self.t(
            "plan.min_term",
            months=self.months(plan.commitment_months or 0),
            total=self.money(plan.commitment_usd, plan.commitment_cny),
        )

    def price_move(self, move: PriceMove) -> str:
        """'$2.20/GPU-h -> $1.89/GPU-h (-14.1%), cheapest now at vastai (was runpod)'."""
        where = self.t("price_moves.at", platform=self.platform(move.new_platform))
        if move.new_platform != move.old_platform:
            where += " " + self.t("price_moves.was", platform=self.platform(move.old_platform))
        return self.t(
            "price_moves.line",
            old=self.price(move.old_usd_per_gpu_hour, move.old_cny_per_gpu_hour),
            new=self.price(move.new_usd_per_gpu_hour, move.new_cny_per_gpu_hour),
            pct=pct(move.pct_change),
            where=where,
        )

    def text_heading(self, key: str, note_key: str | None = None, **values: object) -> str:
        """A heading of the plain-text mail: upper case where the script has case, with an optional note."""
        heading = self.t(key, **values)
        if self.lang == "en":
            heading = heading.upper()
        return (
            self.t("heading.with_note", heading=heading, note=self.t(note_key, **values))
            if note_key
            else heading
        )

    def stock(self, change: StockChange) -> str:
        if change.sold_out:
            return self.tn("stock.sold_out", change.old_available_gpus)
        return self.tn("stock.back", change.new_available_gpus)

    def failure_effect(self, failure: CrawlFailure) -> str:
        """What a crawl that did not stand for all did to the day's plans: its last good crawl
        carried (prices as of it, stock unknown; beside a partial crawl, for what it did not read), or
        its offers dropped out, past GPUPLAN_STALE_HOURS."""
        partial = failure.status == "partial"
        if failure.status == "dated_out" and failure.catalog_date is not None:
            return self.t(
                "failed.catalog_dated",
                date=f"{failure.catalog_date:%Y-%m-%d}",
                hours=f"{failure.stale_hours or 0:.0f}",
            )
        if failure.last_good_at is None:
            return "" if partial else self.t("failed.no_good_crawl")
        values = {"at": f"{failure.last_good_at:%Y-%m-%d %H:%M}", "hours": f"{failure.stale_hours or 0:.0f}"}
        if failure.carried and partial:
            return self.t("failed.partial_carried", **values)
        if failure.carried:
            return self.t("failed.carried", **values)
        if partial:
            return self.t("failed.partial_dropped", **values)
        return self.t("failed.dropped", **values)

    def excluded(self, offer: ExcludedOffer) -> str:
        """'runpod H200 SXM 141GB: 1 offer at $0.500/GPU-h, the market asks $2.95/GPU-h'."""
        return self.tn(
            "excluded.line",
            offer.offers,
            platform=self.platform(offer.platform),
            gpu=offer.gpu_model,
            price=self.price(offer.min_usd_per_gpu_hour, offer.min_cny_per_gpu_hour),
            market=self.price(offer.reference_usd_per_gpu_hour, offer.reference_cny_per_gpu_hour),
        )

    def check_warning(self, warning: CheckWarning) -> str:
        if warning.platform is None:
            return self.t("check.line_all", check=warning.check, detail=oneline(warning.detail))
        return self.t(
            "check.line",
            check=warning.check,
            platform=self.platform(warning.platform),
            detail=oneline(warning.detail),
        )

    def chart_line(self, line: ChartLine) -> str:
        return self.t(
            "chart.line",
            last=self.price(line.last_usd_per_gpu_hour, line.last_cny_per_gpu_hour),
            day=line.last_day,
            low=self.price(line.low_usd_per_gpu_hour, line.low_cny_per_gpu_hour),
            high=self.price(line.high_usd_per_gpu_hour, line.high_cny_per_gpu_hour),
        )

    # --- watches --------------------------------------------------------------------------

    def watch(self, result: WatchResult) -> str:
        """What the watch asks: 'H100 SXM 80GB under $2.00/GPU-h (on vastai, runpod)'."""
        watch = result.watch
        if isinstance(watch, JobWatch):
            return self.t("watch.job", job=watch.job, total=amount(watch.below_total_usd, "USD"))
        where = self.t("watch.platforms", platforms=", ".join(watch.platforms)) if watch.platforms else ""
        if isinstance(watch, StockWatch):
            return self.t("watch.stock", gpu=watch.gpu_model, gpus=watch.min_available_gpus, where=where)
        threshold = self.t("unit.per_gpu_hour", price=amount(watch.below, watch.currency))
        return self.t("watch.price", gpu=watch.gpu_model, price=threshold, where=where)

    def watch_now(self, result: WatchResult) -> str:
        """What it saw: 'now $1.89/GPU-h at vastai (was $2.10/GPU-h)'."""
        now, before = result.now, result.before
        if now is None:
            return self.t("watch.nothing")
        said = self.t(
            f"watch.now.{result.watch.kind}", value=self._reading(result, now.value), **self._where(now)
        )
        if before is None:
            return said
        return self.t("watch.reading", now=said, before=self._reading(result, before.value))

    def watch_line(self, result: WatchResult) -> str:
        return self.t("watch.line", watch=self.watch(result), now=self.watch_now(result))

    def _reading(self, result: WatchResult, value: float) -> str:
        watch = result.watch
        if isinstance(watch, PriceWatch):
            return self.t("unit.per_gpu_hour", price=amount(value, watch.currency))
        if isinstance(watch, StockWatch):
            return self.tn("unit.gpus", int(value))
        return amount(value, "USD")

    @staticmethod
    def _where(reading: WatchReading) -> dict[str, str]:
        return {"platform": oneline(reading.platform), "gpus": gpus(reading.gpu_model, reading.gpu_count)}
