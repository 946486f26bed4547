"""GPU names -> canonical GPU models of the catalog: as platforms write them, and as people do.

Two questions, two functions, one table:
- `identify(raw, memory_gb)`: a platform's raw name (+ its per-GPU memory, if it gives one) for
  the warehouse. Strict: anything ambiguous stays unknown (`gpu_model=None`); we never guess.
  `identify("NVIDIA H100 80GB HBM3")` -> `GpuIdentity("H100 SXM 80GB", 80, "SXM")`.
- `resolve(name)`: a name a person writes (`--gpu A100-80GB`, `gpuplan history H100`, a jobs or
  watches file): the canonical name, loosely; then `identify`; then, for a family name that is
  ambiguous, the card most people mean (`default_model` in gpu_families.csv) with a note naming
  the others. An unknown name raises `UnknownGpu`, suggesting the nearest names.

The table is the catalog itself: cards are the rows of `data/gpus.csv` (family, form, memory),
families the rows of `data/gpu_families.csv` (the regex a name is matched with, what a bare
family name means, the people's default). A new card is a gpus.csv row (and a family row).

Rules of `identify` (why each one exists):
- The name is read as a family ("H100") plus what the text says about form (SXM / PCIe / NVL)
  and memory ("80GB", "48G"). Words that do not describe the card (vendor, "Tesla", "GeForce",
  "gpu_1x_" counts) are ignored; any other word means a different product ("RTX 3090 Ti" is not
  an "RTX 3090") and the name stays unknown.
- A memory figure from the platform (`memory_gb`, e.g. Vast's `gpu_ram`) is snapped to the
  family's real sizes within `MEMORY_SNAP_TOLERANCE`; sizes are never merged: an "RTX 4090" with
  48 GB is the modified 48 GB card, a different product from the 24 GB one.
- Only when exactly one catalog row fits what is known do we name it (and, for a family whose
  row is not the unit every platform counts in, `needs_memory`, only when the memory is stated).
"""

from __future__ import annotations

import csv
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from sizing.catalog import load_gpus, name_key

FAMILIES_PATH = Path(__file__).with_name("data") / "gpu_families.csv"

# Reported memory differs from the marketing size: MiB vs GB, and the driver reserves a little
# (Vast reports 81559 MiB for an 80 GB H100, RunPod 143 GB for the 141 GB H200 NVL). 7 % is the
# tolerance gpuhunt's correct_gpu_memory_gib() uses for the same job; the closest sizes we must
# keep apart (16/20/24, 80/94/96) are further apart than that.
MEMORY_SNAP_TOLERANCE = 0.07


class UnknownGpu(ValueError):
    """A name no catalog card answers to; the message suggests the nearest names."""


@dataclass(frozen=True)
class GpuIdentity:
    """What a raw name says about the card. `gpu_model` None = unknown or ambiguous."""

    gpu_model: str | None
    gpu_memory_gb: float | None
    gpu_form: str | None  # "SXM" | "PCIe" | "NVL" | None


@dataclass(frozen=True)
class GpuMatch:
    """What a name a person wrote means: the card, and a note when it was a choice among variants."""

    gpu_model: str
    note: str | None  # e.g. "'H100' read as H100 SXM 80GB; also: H100 PCIe 80GB, H100 NVL 94GB"
    variants: tuple[str, ...]  # every card the name could mean (the chosen one first)


@dataclass(frozen=True)
class _Variant:
    form: str | None
    memory_gb: float
    gpu_model: str


@dataclass(frozen=True)
class _Family:
    name: str
    pattern: re.Pattern[str]
    variants: tuple[_Variant, ...]
    # The form a bare family name means by the vendor's own naming, e.g. NVIDIA sells "H200"
    # (SXM) and "H200 NVL"; None where a bare name is ambiguous.
    bare_form: str | None
    # The memory a bare family name means where the vendor sells one size; None otherwise.
    bare_memory_gb: float | None
    default_model: str  # the card people mean by the bare family name (resolve, never identify)
    aliases: tuple[str, ...]  # extra spellings, matched loosely (name_key) by resolve
    needs_memory: bool = False  # an MI250X module is two 64 GB GCDs: identify needs the memory


@cache
def _families() -> tuple[_Family, ...]:
    """The families of gpu_families.csv, in file order (the order names are matched in), with their
    cards from gpus.csv. Raises ValueError when the two files disagree."""
    cards: dict[str, list[_Variant]] = {}
    for gpu in load_gpus():
        cards.setdefault(gpu.family, []).append(_Variant(gpu.form, gpu.memory_gb, gpu.gpu_model))
    families = []
    with FAMILIES_PATH.open(newline="", encoding="utf-8") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            name = row["family"].strip()
            where = f"{FAMILIES_PATH.name} line {line} ({name})"
            variants = tuple(cards.pop(name, ()))
            if not variants:
                raise ValueError(f"{where}: no card of this family in gpus.csv")
            default = row["default_model"].strip()
            if default not in {variant.gpu_model for variant in variants}:
                raise ValueError(f"{where}: default_model {default!r} is not a card of the family")
            memory = row["bare_memory_gb"].strip()
            families.append(
                _Family(
                    name=name,
                    pattern=re.compile(rf"(?<![A-Z0-9]){row['pattern'].strip()}(?![A-Z0-9])"),
                    variants=variants,
                    bare_form=row["bare_form"].strip() or None,
                    bare_memory_gb=float(memory) if memory else None,
                    default_model=default,
                    aliases=tuple(a.strip() for a in row["aliases"].split("|") if a.strip()),
                    needs_memory=row["needs_memory"].strip().lower() == "true",
                )
            )
    if cards:
        raise ValueError(
            f"gpus.csv families without a row in {FAMILIES_PATH.name}: {', '.join(sorted(cards))}"
        )
    return tuple(families)


def canonical_models() -> frozenset[str]:
    """Every canonical GPU model name (the catalog's `gpu_model` column)."""
    return frozenset(variant.gpu_model for family in _families() for variant in family.variants)


# Chinese spellings seen on the Chinese platforms, rewritten before matching.
_CHINESE_WORDS = {"昇腾": " ASCEND ", "华为": " HUAWEI ", "英伟达": " NVIDIA ", "显卡": " "}

# Words that say nothing about which card it is. Anything else left over after the family, form
# and memory are read makes the name unknown.
_NOISE_WORDS = frozenset(
    {"NVIDIA", "GEFORCE", "TESLA", "AMD", "INSTINCT", "HUAWEI", "INTEL", "HABANA", "GPU", "OAM", "HBM2E"}
    | {"HBM3", "HBM3E", "NVL72", "NVL36"}  # memory kinds; the GB200/GB300 rack, not another chip
    | {"GENERATION", "GB", "G", "GIB", "VRAM", "MEMORY", "CARD"}  # RunPod: "... Ada Generation"
)
_FORM_WORDS = {
    "SXM": "SXM",
    "SXM2": "SXM",
    "SXM4": "SXM",
    "SXM5": "SXM",
    "SXM6": "SXM",
    "PCIE": "PCIe",
    "NVL": "NVL",
    # AutoDL: "A800-80GB-NVLink", "H20-NVLink": boards on NVLink are SXM boards (PCIe cards take
    # at most a bridge between pairs, and no platform names a bridged pair NVLink).
    "NVLINK": "SXM",
}
_COUNT = re.compile(r"^\d+X$")  # "1x", "8x" in "gpu_1x_h100_sxm5", "8x A100"
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?) ?(?:GB|G|GIB)$")


# Characters that separate words, as spaces (one table lookup per character: str.translate).
_SEPARATORS = str.maketrans(dict.fromkeys("_-/(),×*:+", " "))
# "RTX4090", "Ascend910B": a series word glued to the model number is two words.
_GLUED_SERIES = re.compile(r"\b(RTX|ASCEND|TESLA)(?=\d)")
# "80 GB" -> "80GB" so a memory figure is one token.
_SPACED_MEMORY = re.compile(r"(\d)\s+(GB|G|GIB)\b")


def _normalize(raw: str) -> str:
    text = raw
    if not text.isascii():
        for word, replacement in _CHINESE_WORDS.items():
            text = text.replace(word, replacement)
    text = text.upper().translate(_SEPARATORS)
    # Each pattern needs its words: a name without them (most names) is left as it is, unsearched.
    if "RTX" in text or "ASCEND" in text or "TESLA" in text:
        text = _GLUED_SERIES.sub(r"\1 ", text)
    if "G" in text:
        text = _SPACED_MEMORY.sub(r"\1\2", text)
    return " ".join(text.split())  # runs of whitespace as one space, none at either end


def _snap(memory_gb: float, sizes: set[float]) -> float | None:
    best = min(sizes, key=lambda size: abs(size - memory_gb))
    return best if abs(best - memory_gb) <= MEMORY_SNAP_TOLERANCE * best else None


def _read(raw_name: str) -> tuple[_Family, list[str]] | None:
    """The family a name names and the words left beside it, or None."""
    text = _normalize(raw_name)
    for family in _families():
        match = family.pattern.search(text)
        if match is not None:
            return family, (text[: match.start()] + " " + text[match.end() :]).split()
    return None


# Markets repeat a few dozen names thousands of times (a Vast answer has ~10k offers).
@lru_cache(maxsize=4096)
def identify(raw_name: str, memory_gb: float | None = None) -> GpuIdentity:
    """Map one raw GPU name (+ the platform's per-GPU memory in GB, if it gives one).

    `gpu_memory_gb` and `gpu_form` are filled with what is known even when the model stays
    unknown, so the warehouse keeps as much as the platform said.
    """
    read = _read(raw_name)
    if read is None:
        return GpuIdentity(None, _positive(memory_gb), None)
    family, rest = read
    return _resolve_variant(family, rest, memory_gb)


def identify_first(names: list[str], memory_gb: float | None = None) -> GpuIdentity:
    """The first of several names for one card that resolves (e.g. RunPod's id, then displayName)."""
    identity = GpuIdentity(None, _positive(memory_gb), None)
    for name in names:
        if not name:
            continue
        identity = identify(name, memory_gb)
        if identity.gpu_model is not None:
            return identity
    return identity


def _positive(memory_gb: float | None) -> float | None:
    """A platform's memory figure kept as said, to 0.1 GB (23.988 from 24564 MiB -> 24.0)."""
    # float(): identify() is cached and 16, 16.0 are one lru_cache key; the first caller's type leaked
    return float(round(memory_gb, 1)) if memory_gb is not None and memory_gb > 0 else None


@dataclass(frozen=True)
class _Described:
    """What the words beside a family name state; `foreign`: a word that names another product
    (forms and memory are then those read before it)."""

    forms: frozenset[str]
    memory_gb: frozenset[float]
    foreign: bool


def _described(words: list[str]) -> _Described:
    forms: set[str] = set()
    named_memory: set[float] = set()
    for word in words:
        if word in _NOISE_WORDS or _COUNT.match(word):
            continue
        if word in _FORM_WORDS:
            forms.add(_FORM_WORDS[word])
            continue
        memory = _MEMORY.match(word)
        if memory:
            named_memory.add(float(memory.group(1)))
            continue
        return _Described(frozenset(forms), frozenset(named_memory), foreign=True)
    return _Described(frozenset(forms), frozenset(named_memory), foreign=False)


def _candidates(
    family: _Family, words: list[str], memory_hint_gb: float | None
) -> tuple[list[_Variant], float | None, str | None]:
    """The cards that fit what the words (and the platform's memory figure) say, and the memory and
    form that are known whatever the cards: what `identify` answers when they are not exactly one.
    No card fits when the words name another product, contradict each other or state a size the
    family does not have."""
    described = _described(words)
    said_memory = _said_memory(set(described.memory_gb), memory_hint_gb)
    if described.foreign or len(described.forms) > 1 or len(described.memory_gb) > 1:
        return [], said_memory, None
    named_memory = described.memory_gb
    form = next(iter(described.forms), None)
    # NVIDIA's H100 PCIe uses HBM2e; "H100 80GB HBM3" (RunPod's id) is the SXM board.
    if form is None and family.name == "H100" and "HBM3" in words:
        form = "SXM"
    # The catalog does not tell forms apart for this family (A10, B200, RTX cards).
    if all(v.form is None for v in family.variants):
        form = None
    sizes = {v.memory_gb for v in family.variants}
    snapped = {_snap(m, sizes) for m in named_memory}
    if memory_hint_gb is not None and memory_hint_gb > 0:
        snapped.add(_snap(memory_hint_gb, sizes))
    if None in snapped or len(snapped) > 1:  # a size this family does not have, or a disagreement
        return [], said_memory, form
    memory = snapped.pop() if snapped else None
    candidates = [
        v
        for v in family.variants
        if (memory is None or v.memory_gb == memory) and (form is None or v.form == form)
    ]
    if form is None and len({v.form for v in candidates}) > 1 and family.bare_form is not None:
        candidates = [v for v in candidates if v.form == family.bare_form]
    if memory is None and len(candidates) > 1 and family.bare_memory_gb is not None:
        candidates = [v for v in candidates if v.memory_gb == family.bare_memory_gb]
    if form is None and len(candidates) > 1:
        # A form-less catalog row stands for "form not stated" where the family has one.
        unstated = [v for v in candidates if v.form is None]
        if len(unstated) == 1:
            candidates = unstated
    return candidates, memory, form


def _resolve_variant(family: _Family, words: list[str], memory_hint_gb: float | None) -> GpuIdentity:
    candidates, memory, form = _candidates(family, words, memory_hint_gb)
    if len(candidates) != 1 or (family.needs_memory and memory is None):
        return GpuIdentity(None, memory, form)
    variant = candidates[0]
    return GpuIdentity(variant.gpu_model, variant.memory_gb, variant.form)


def _said_memory(named_memory: set[float], hint_gb: float | None) -> float | None:
    """The memory figure to keep for an unknown card: the name's own, else the platform's."""
    if len(named_memory) == 1:
        return next(iter(named_memory))
    return _positive(hint_gb)


# --- names people write ------------------------------------------------------------------------
def resolve(name: str) -> GpuMatch:
    """The card a person means by `name`; raises UnknownGpu with the nearest names otherwise."""
    key = name_key(name)
    if not key:
        raise UnknownGpu("empty GPU name")
    by_key = {name_key(model): model for model in canonical_models()}
    if key in by_key:
        model = by_key[key]
        return GpuMatch(model, None, (model,))
    for family in _families():
        if key in {name_key(alias) for alias in family.aliases}:
            return _family_default(name, family, list(family.variants))
    read = _read(name)
    if read is not None:
        family, words = read
        candidates, _, _ = _candidates(family, words, None)
        if len(candidates) == 1:
            model = candidates[0].gpu_model
            return GpuMatch(model, None, (model,))
        if candidates:
            return _family_default(name, family, candidates)
        if not _described(words).foreign:  # a size or form this family does not come in
            raise UnknownGpu(_unknown_message(name, [v.gpu_model for v in family.variants]))
    raise UnknownGpu(_unknown_message(name, nearest_names(name, _loose_names())))


def _family_default(name: str, family: _Family, candidates: list[_Variant]) -> GpuMatch:
    """Among `candidates` of a family: the default card if it is one, else the one closest to it
    (its form, then its memory): "A100 40GB" is the SXM 40 GB board, "A100 PCIe" the 80 GB one."""
    default = next(v for v in family.variants if v.gpu_model == family.default_model)
    ranked = sorted(candidates, key=lambda v: (v.form != default.form, v.memory_gb != default.memory_gb))
    chosen = ranked[0].gpu_model
    others = [v.gpu_model for v in candidates if v.gpu_model != chosen]
    note = f"{name!r} read as {chosen}" + (f"; also: {', '.join(others)}" if others else "")
    return GpuMatch(chosen, note, (chosen, *others))


def _loose_names() -> set[str]:
    names = set(canonical_models())
    for family in _families():
        names.add(family.name)
        names.update(family.aliases)
    return names


def _unknown_message(name: str, nearest: list[str]) -> str:
    return f"unknown GPU {name!r}{did_you_mean(nearest)} (`gpuplan gpus` lists every card and its names)"


def nearest_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` of `names` closest to `name` as typed, closest first (difflib's ratio, at least 0.4):
    what an unknown name's error suggests, for GPUs and platforms alike."""
    return difflib.get_close_matches(name, sorted(names), n=n, cutoff=0.4)


def did_you_mean(nearest: Sequence[str]) -> str:
    """ "; did you mean 'a', 'b'?" for an error message, or "" when nothing is near."""
    return f"; did you mean {', '.join(repr(n) for n in nearest)}?" if nearest else ""


def family_models(name: str) -> tuple[str, ...]:
    """Every card a name could mean (for commands that answer per variant); raises UnknownGpu."""
    return resolve(name).variants


def aliases(gpu_model: str) -> tuple[str, ...]:
    """Names people write for the card, each resolving to it: its family name when it is the
    family's default, SkyPilot's `FAMILY-NNGB` and the platforms' `FAMILY NNG`, and the family's
    extra spellings. Derived from the catalog, so they cannot drift from it."""
    for family in _families():
        variant = next((v for v in family.variants if v.gpu_model == gpu_model), None)
        if variant is None:
            continue
        memory = f"{variant.memory_gb:g}"
        spellings = [f"{family.name}-{memory}GB", f"{family.name} {memory}G"]
        if variant.form is not None:
            spellings[:0] = [
                f"{family.name} {variant.form}",
                f"{family.name}-{variant.form.upper()}-{memory}GB",
            ]
        if family.default_model == gpu_model:
            spellings = [family.name, *family.aliases, *spellings]
        return tuple(s for s in dict.fromkeys(spellings) if _resolves_to(s, gpu_model))
    raise UnknownGpu(f"{gpu_model!r} is not a catalog card")


@cache
def short_name(gpu_model: str) -> str:
    """The shortest name people write that means this card (`910B`, `4090 48G`, `H100`): the card,
    its aliases, and those without a leading `RTX `/`Ascend `, the first of the shortest that
    resolves back to it. For tables, where every cell counts."""
    names = [gpu_model, *aliases(gpu_model)]
    names += [name.split(" ", 1)[1] for name in names if name.startswith(("RTX ", "Ascend "))]
    return min((name for name in names if _resolves_to(name, gpu_model)), key=lambda name: (len(name), name))


def _resolves_to(name: str, gpu_model: str) -> bool:
    try:
        return resolve(name).gpu_model == gpu_model
    except UnknownGpu:
        return False
