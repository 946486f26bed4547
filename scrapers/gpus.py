"""Raw GPU names as platforms write them -> canonical GPU models of `sizing/data/gpus.csv`.

`identify("NVIDIA H100 80GB HBM3")` -> `GpuIdentity("H100 SXM 80GB", 80, "SXM")`.

Rules (why each one exists):
- The name is read as a family ("H100") plus what the text says about form
  (SXM / PCIe / NVL) and memory ("80GB", "48G"). Words that do not describe the
  card (vendor, "Tesla", "GeForce", "gpu_1x_" counts) are ignored; any other
  word means a different product ("RTX 3090 Ti" is not an "RTX 3090") and the
  name stays unknown.
- A memory figure from the platform (`memory_gb`, e.g. Vast's `gpu_ram`) is
  snapped to the family's real sizes within `MEMORY_SNAP_TOLERANCE`; sizes are
  never merged: an "RTX 4090" with 48 GB is the modified 48 GB card, a
  different product from the 24 GB one.
- Only when exactly one catalog row fits what is known do we name it. Anything
  ambiguous (a bare "H20": 96 or 141 GB?) or unknown returns `gpu_model=None`;
  the offer is kept with its raw name, and the warehouse flags it. We never guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Reported memory differs from the marketing size: MiB vs GB, and the driver
# reserves a little (Vast reports 81559 MiB for an 80 GB H100, RunPod 143 GB for
# the 141 GB H200 NVL). 7 % is the tolerance gpuhunt's correct_gpu_memory_gib()
# uses for the same job; the closest sizes we must keep apart (16/20/24, 80/94/96)
# are further apart than that.
MEMORY_SNAP_TOLERANCE = 0.07


@dataclass(frozen=True)
class GpuIdentity:
    """What a raw name says about the card. `gpu_model` None = unknown or ambiguous."""

    gpu_model: str | None
    gpu_memory_gb: float | None
    gpu_form: str | None  # "SXM" | "PCIe" | "NVL" | None


@dataclass(frozen=True)
class _Variant:
    form: str | None
    memory_gb: float
    gpu_model: str  # exactly a gpu_model of sizing/data/gpus.csv


@dataclass(frozen=True)
class _Family:
    name: str
    pattern: re.Pattern[str]
    variants: tuple[_Variant, ...]
    # The form a bare family name means by the vendor's own naming, e.g. NVIDIA
    # sells "H200" (SXM) and "H200 NVL"; None where a bare name is ambiguous.
    bare_form: str | None = None
    # The memory a bare family name means by the vendor's spec, where there is one
    # size (an "RTX 4090" is a 24 GB card; the 48 GB card is a modification and is
    # always advertised as such). None where the vendor sells several sizes.
    bare_memory_gb: float | None = None


def _family(
    name: str,
    regex: str,
    variants: list[tuple[str | None, float, str]],
    bare_form: str | None = None,
    bare_memory_gb: float | None = None,
) -> _Family:
    return _Family(
        name=name,
        pattern=re.compile(rf"(?<![A-Z0-9]){regex}(?![A-Z0-9])"),
        variants=tuple(_Variant(form, float(memory), model) for form, memory, model in variants),
        bare_form=bare_form,
        bare_memory_gb=None if bare_memory_gb is None else float(bare_memory_gb),
    )


# Order matters only where one pattern contains another ("4090 D" before "4090",
# "910B2" before "910B", "L40S" before "L40"); patterns match whole tokens.
_FAMILIES: tuple[_Family, ...] = (
    _family("GH200", r"GH200", [(None, 96, "GH200 96GB")], bare_memory_gb=96),
    _family("B200", r"B200", [(None, 180, "B200 180GB")], bare_memory_gb=180),
    _family(
        "H200",
        r"H200",
        [("SXM", 141, "H200 SXM 141GB"), ("NVL", 141, "H200 NVL 141GB")],
        bare_form="SXM",
        bare_memory_gb=141,
    ),
    _family(
        "H100",
        r"H100",
        [("SXM", 80, "H100 SXM 80GB"), ("PCIe", 80, "H100 PCIe 80GB"), ("NVL", 94, "H100 NVL 94GB")],
    ),
    # Chinese platforms often write "H800" / "A800 80G" without the form: those map to
    # the form-less catalog rows, which assume the slower PCIe figures (never a guess
    # that overstates speed). A stated form always wins.
    _family(
        "H800",
        r"H800",
        [("SXM", 80, "H800 SXM 80GB"), ("PCIe", 80, "H800 PCIe 80GB"), (None, 80, "H800 80GB")],
    ),
    _family("H20", r"H20", [(None, 96, "H20 96GB"), (None, 141, "H20 141GB")]),
    _family(
        "A100",
        r"A100",
        [
            ("SXM", 40, "A100 SXM 40GB"),
            ("SXM", 80, "A100 SXM 80GB"),
            ("PCIe", 40, "A100 PCIe 40GB"),
            ("PCIe", 80, "A100 PCIe 80GB"),
        ],
    ),
    _family(
        "A800",
        r"A800",
        [("SXM", 80, "A800 SXM 80GB"), ("PCIe", 80, "A800 PCIe 80GB"), (None, 80, "A800 80GB")],
    ),
    _family(
        "V100",
        r"V100",
        [
            ("SXM", 16, "V100 SXM 16GB"),
            ("SXM", 32, "V100 SXM 32GB"),
            ("PCIe", 16, "V100 PCIe 16GB"),
            ("PCIe", 32, "V100 PCIe 32GB"),
        ],
    ),
    _family("A10", r"A10", [(None, 24, "A10 24GB")], bare_memory_gb=24),
    _family("A40", r"A40", [(None, 48, "A40 48GB")], bare_memory_gb=48),
    _family("L40S", r"L40 ?S", [(None, 48, "L40S 48GB")], bare_memory_gb=48),
    _family("L40", r"L40", [(None, 48, "L40 48GB")], bare_memory_gb=48),
    _family("L20", r"L20", [(None, 48, "L20 48GB")], bare_memory_gb=48),
    _family("L4", r"L4", [(None, 24, "L4 24GB")], bare_memory_gb=24),
    _family("RTX 3090", r"(?:RTX )?3090", [(None, 24, "RTX 3090 24GB")], bare_memory_gb=24),
    _family("RTX 4090D", r"(?:RTX )?4090 ?D", [(None, 24, "RTX 4090D 24GB")], bare_memory_gb=24),
    _family(
        "RTX 4090",
        r"(?:RTX )?4090",
        [(None, 24, "RTX 4090 24GB"), (None, 48, "RTX 4090 48GB")],
        bare_memory_gb=24,
    ),
    _family("RTX 5090", r"(?:RTX )?5090", [(None, 32, "RTX 5090 32GB")], bare_memory_gb=32),
    _family("RTX A6000", r"(?:RTX )?A6000", [(None, 48, "RTX A6000 48GB")], bare_memory_gb=48),
    _family("RTX 6000 Ada", r"RTX 6000 ?ADA", [(None, 48, "RTX 6000 Ada 48GB")], bare_memory_gb=48),
    _family("MI300X", r"MI300X", [(None, 192, "MI300X 192GB")], bare_memory_gb=192),
    _family("Ascend 910B1", r"(?:ASCEND )?910B1", [(None, 64, "Ascend 910B1 64GB")], bare_memory_gb=64),
    _family("Ascend 910B2", r"(?:ASCEND )?910B2", [(None, 64, "Ascend 910B2 64GB")], bare_memory_gb=64),
    _family("Ascend 910B3", r"(?:ASCEND )?910B3", [(None, 64, "Ascend 910B3 64GB")], bare_memory_gb=64),
    _family("Ascend 910B4", r"(?:ASCEND )?910B4", [(None, 64, "Ascend 910B4 64GB")], bare_memory_gb=64),
    _family("Ascend 910B", r"(?:ASCEND )?910B", [(None, 64, "Ascend 910B 64GB")], bare_memory_gb=64),
)

CANONICAL_MODELS: frozenset[str] = frozenset(v.gpu_model for f in _FAMILIES for v in f.variants)

# Chinese spellings seen on the Chinese platforms, rewritten before matching.
_CHINESE_WORDS = {"昇腾": " ASCEND ", "华为": " HUAWEI ", "英伟达": " NVIDIA ", "显卡": " "}

# Words that say nothing about which card it is. Anything else left over after the
# family, form and memory are read makes the name unknown.
_NOISE_WORDS = frozenset(
    {"NVIDIA", "GEFORCE", "TESLA", "AMD", "INSTINCT", "HUAWEI", "GPU", "OAM", "HBM2E", "HBM3", "HBM3E"}
    | {"GENERATION"}  # RunPod: "NVIDIA RTX 6000 Ada Generation"
    | {"GB", "G", "GIB", "VRAM", "MEMORY", "CARD"}
)
_FORM_WORDS = {
    "SXM": "SXM",
    "SXM2": "SXM",
    "SXM4": "SXM",
    "SXM5": "SXM",
    "SXM6": "SXM",
    "PCIE": "PCIe",
    "NVL": "NVL",
}
_COUNT = re.compile(r"^\d+X$")  # "1x", "8x" in "gpu_1x_h100_sxm5", "8x A100"
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?) ?(?:GB|G|GIB)$")


def _normalize(raw: str) -> str:
    text = raw
    for word, replacement in _CHINESE_WORDS.items():
        text = text.replace(word, replacement)
    text = text.upper()
    text = re.sub(r"[_\-/(),×*:+]", " ", text)
    # "80 GB" -> "80GB" so a memory figure is one token.
    text = re.sub(r"(\d)\s+(GB|G|GIB)\b", r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip()


def _snap(memory_gb: float, sizes: set[float]) -> float | None:
    best = min(sizes, key=lambda size: abs(size - memory_gb))
    return best if abs(best - memory_gb) <= MEMORY_SNAP_TOLERANCE * best else None


# Markets repeat a few dozen names thousands of times (a Vast answer has ~10k offers).
@lru_cache(maxsize=4096)
def identify(raw_name: str, memory_gb: float | None = None) -> GpuIdentity:
    """Map one raw GPU name (+ the platform's per-GPU memory in GB, if it gives one).

    `gpu_memory_gb` and `gpu_form` are filled with what is known even when the
    model stays unknown, so the warehouse keeps as much as the platform said.
    """
    text = _normalize(raw_name)
    for family in _FAMILIES:
        match = family.pattern.search(text)
        if match is None:
            continue
        rest = (text[: match.start()] + " " + text[match.end() :]).split()
        return _resolve(family, rest, memory_gb)
    return GpuIdentity(None, _positive(memory_gb), None)


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
    return round(memory_gb, 1) if memory_gb is not None and memory_gb > 0 else None


def _resolve(family: _Family, words: list[str], memory_hint_gb: float | None) -> GpuIdentity:
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
        return GpuIdentity(None, _said_memory(named_memory, memory_hint_gb), None)  # another product
    said_memory = _said_memory(named_memory, memory_hint_gb)
    if len(forms) > 1 or len(named_memory) > 1:
        return GpuIdentity(None, said_memory, None)
    form = forms.pop() if forms else None
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
        return GpuIdentity(None, said_memory, form)
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
    if len(candidates) != 1:
        return GpuIdentity(None, memory, form)
    variant = candidates[0]
    return GpuIdentity(variant.gpu_model, variant.memory_gb, variant.form)


def _said_memory(named_memory: set[float], hint_gb: float | None) -> float | None:
    """The memory figure to keep for an unknown card: the name's own, else the platform's."""
    if len(named_memory) == 1:
        return next(iter(named_memory))
    return _positive(hint_gb)
