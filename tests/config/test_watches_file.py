"""config/watches_file.py: the watches file read into watches, every problem one line naming its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.user_files import UserFileError
from config.watches_file import JobWatch, PriceWatch, StockWatch, WatchList, parse_watches, read_watches

PLATFORMS = ("vastai", "runpod", "autodl")


def _parse(text: str):
    return parse_watches(text, "watches.yaml", PLATFORMS)


EXAMPLE = """\
# price: the cheapest on-demand H100 under 2 USD per GPU-hour, anywhere
- gpu: H100
  below_usd_per_gpu_hour: 2.0
- gpu: "4090"
  below_cny_per_gpu_hour: 2.5
  platforms: [autodl]
- gpu: H100 SXM 80GB
  min_available_gpus: 8
- job: qwen-sft
  below_total_usd: 500
"""


def test_the_example_parses_to_one_watch_per_item_with_its_line():
    assert _parse(EXAMPLE) == (
        PriceWatch(2, "H100", "H100 SXM 80GB", 2.0, "USD"),
        PriceWatch(4, "4090", "RTX 4090 24GB", 2.5, "CNY", ("autodl",)),
        StockWatch(7, "H100 SXM 80GB", "H100 SXM 80GB", 8),
        JobWatch(9, "qwen-sft", 500.0),
    )


def test_an_empty_file_has_no_watches():
    assert _parse("") == () and _parse("# nothing yet\n") == ()


BAD_FILES = {
    "not YAML": ("- gpu: H100\n  below_usd_per_gpu_hour: [1\n", "watches.yaml line 3: not valid YAML"),
    "not a list": ("gpu: H100\n", "watches.yaml line 1: expected a list of watches"),
    "an item that is no mapping": ("- H100\n", "watches.yaml line 1: a watch is a mapping"),
    "no kind": ("- gpu: H100\n  below: 2\n", "watches.yaml line 1: a watch needs job, min_available_gpus"),
    "an unknown key": (
        "- gpu: H100\n  below_usd_per_gpu_hour: 2\n  platfrom: [vastai]\n",
        "watches.yaml line 3: unknown key 'platfrom' in a price watch",
    ),
    "both currencies": (
        "- gpu: H100\n  below_usd_per_gpu_hour: 2\n  below_cny_per_gpu_hour: 14\n",
        "watches.yaml line 1: a price watch gives one of",
    ),
    "a price that is no number": (
        "- gpu: H100\n  below_usd_per_gpu_hour: two\n",
        "watches.yaml line 2: below_usd_per_gpu_hour must be a positive number, not 'two'",
    ),
    "a negative price": (
        "- gpu: H100\n  below_usd_per_gpu_hour: -1\n",
        "line 2: below_usd_per_gpu_hour must be",
    ),
    "a count that is not whole": (
        "- gpu: H100\n  min_available_gpus: 2.5\n",
        "watches.yaml line 2: min_available_gpus must be a positive whole number",
    ),
    "an unknown GPU": (
        "- gpu: H100\n  below_usd_per_gpu_hour: 2\n- gpu: Z9000\n  min_available_gpus: 1\n",
        "watches.yaml line 3: unknown GPU 'Z9000'",
    ),
    "an unknown platform": (
        "- gpu: H100\n  min_available_gpus: 1\n  platforms: [vast]\n",
        "watches.yaml line 3: unknown platform 'vast'",
    ),
    "platforms as a string": (
        "- gpu: H100\n  min_available_gpus: 1\n  platforms: vastai\n",
        "watches.yaml line 3: platforms must be a list",
    ),
    "a job watch without a threshold": (
        "- job: qwen-sft\n",
        "watches.yaml line 1: a job watch needs below_total_usd",
    ),
    "a key given twice": (
        "- gpu: H100\n  gpu: A100\n  min_available_gpus: 1\n",
        "watches.yaml line 2: key 'gpu' is not a name or is given twice",
    ),
}


@pytest.mark.parametrize("text, message", BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_malformed_file_is_one_clear_error_with_the_line(text, message):
    with pytest.raises(UserFileError) as raised:
        _parse(text)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_reading_a_file_never_raises(tmp_path: Path):
    good = tmp_path / "watches.yaml"
    good.write_text(EXAMPLE, encoding="utf-8")
    assert len(read_watches(good, PLATFORMS).watches) == 4
    bad = tmp_path / "bad.yaml"
    bad.write_text("gpu: H100\n", encoding="utf-8")
    listed = read_watches(bad, None)
    assert (
        listed.watches == ()
        and listed.error == f"GPUPLAN_WATCHES {bad} line 1: expected a list of watches (- gpu: ...)"
    )
    missing = read_watches(tmp_path / "missing.yaml", PLATFORMS)
    assert missing.error == f"GPUPLAN_WATCHES {tmp_path / 'missing.yaml'}: not found"
    assert read_watches(None, PLATFORMS) == WatchList()


def test_gpu_names_resolve_as_people_write_them(tmp_path):
    file = tmp_path / "watches.yaml"
    file.write_text("- gpu: A100-80GB\n  min_available_gpus: 8\n- gpu: '4090'\n  min_available_gpus: 1\n")
    assert [w.gpu_model for w in read_watches(file, PLATFORMS).watches] == ["A100 SXM 80GB", "RTX 4090 24GB"]
    file.write_text("- gpu: H1000\n  min_available_gpus: 8\n")
    assert "line 1: unknown GPU 'H1000'" in (read_watches(file, PLATFORMS).error or "")
