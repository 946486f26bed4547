"""config/user_files.py: the one reader of the user's files, and its guards against hostile ones:
what is not a regular file or is too large is refused unread, YAML aliases cannot explode, and
every error is one bounded line naming the file and the line."""

from __future__ import annotations

import datetime as dt
import os
import pickle
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from config import user_files
from config.jobs_file import read_jobs
from config.user_files import MAX_MESSAGE_CHARS, NotAList, UserFileError, read_text, yaml_list
from config.watches_file import read_watches
from scrapers.quotes.file import read_records

# The classic "billion laughs" as one item: 9 levels of 9 aliases (9**9 = 387 million values).
LAUGHS = "- name: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"  x{level}: &{chr(97 + level)} [{','.join(['*' + chr(96 + level)] * 9)}]\n" for level in range(1, 9)
)


def _items(text: str) -> list[user_files.Item]:
    return yaml_list(text, "f.yaml", "things", "- a: ...")


def test_yaml_is_read_as_written_beside_its_values() -> None:
    [item] = _items("# one\n- tokens: 1.5e9\n  when: 2026-12-01\n  gpus: [4090, H100]\n")
    (tokens, tokens_value), (when, when_value), (_, gpus) = item.written.pairs or ()
    assert (item.line, tokens.text, tokens.line, tokens_value.text) == (2, "tokens", 2, "1.5e9")
    assert tokens_value.value == "1.5e9"  # YAML 1.1: a string (the jobs file reads the text anyway)
    assert (when.line, when_value.value) == (3, dt.date(2026, 12, 1))
    assert [(g.line, g.text) for g in gpus.items or ()] == [(4, "4090"), (4, "H100")]
    assert item.written.value == {"tokens": "1.5e9", "when": dt.date(2026, 12, 1), "gpus": [4090, "H100"]}


def test_merge_keys_apply_to_the_value_and_stay_a_pair_as_written() -> None:
    first, second = _items("- &base {a: 1, b: 2}\n- {<<: *base, b: 3}\n")
    assert second.written.value == {"a": 1, "b": 3}
    assert [key.text for key, _ in second.written.pairs or ()] == ["<<", "b"]
    assert first.written.value == {"a": 1, "b": 2}


def test_an_empty_file_holds_nothing_and_not_a_list_is_said() -> None:
    assert _items("") == [] and _items("# only a comment\n") == []
    with pytest.raises(NotAList, match=r"^f\.yaml line 2: expected a list of things \(- a: \.\.\.\)$"):
        _items("\na: 1\n")
    with pytest.raises(UserFileError, match=r"^f\.yaml line 3: not valid YAML: "):
        _items("- a: 1\n- b: [2\n")
    with pytest.raises(UserFileError, match=r"^f\.yaml: nested too deeply to be a list of things$"):
        _items("- " + "[" * 5000 + "]" * 5000 + "\n")


def test_a_billion_laughs_item_is_refused_unbuilt_and_the_others_read() -> None:
    good, bomb, after = _items("- a: 1\n" + LAUGHS + "- c: 3\n")
    assert good.written.value == {"a": 1} and after.written.value == {"c": 3}
    assert bomb.line == 2 and bomb.written.value is None
    assert bomb.refused == (
        "YAML aliases expand this item past 1,000 values (a 'billion laughs' file?): "
        "refused, nothing built from it"
    )


def test_an_item_that_refers_to_itself_is_refused() -> None:
    [item] = _items("- &q {seller: a, again: *q}\n")
    assert item.refused == "a YAML alias refers to the item it is in: refused"


def test_many_small_bombs_spend_the_files_alias_budget() -> None:
    """Each `- *a` is small (999 values), but a file of them would build millions: past the
    file's budget every later item is refused."""
    anchor = "- &a [" + ",".join(["x"] * 998) + "]\n"
    items = _items(anchor + "- *a\n" * 150)
    built = [item for item in items if item.refused is None]
    assert len(built) == 1 + user_files.MAX_ALIAS_VALUES // 999
    assert all("expand past 100,000 values by here" in (item.refused or "") for item in items[len(built) :])


def test_a_value_yaml_cannot_build_refuses_its_item_only() -> None:
    bad, good = _items("- valid_to: 2026-02-30\n- valid_to: 2026-02-28\n")
    assert bad.refused is not None and "day is out of range" in bad.refused
    assert good.written.value == {"valid_to": dt.date(2026, 2, 28)}


def test_the_quotes_file_reads_through_the_same_reader() -> None:
    [record] = read_records("- seller: a\n  valid_to: 2026-02-30\n", "quotes.yaml")
    assert record.values == {} and "its values cannot be read" in (record.shape_problem or "")
    with pytest.raises(Exception, match=r"quotes\.yaml line 1: expected a list of quotes"):
        read_records("seller: a\n", "quotes.yaml")


def test_the_jobs_and_watches_files_refuse_an_alias_bomb_with_its_line(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("- name: ok\n  model: 7B\n  method: lora\n  tokens: 1B\n" + LAUGHS, encoding="utf-8")
    with pytest.raises(UserFileError, match=r"jobs\.yaml line 5: YAML aliases expand this item past 1,000"):
        read_jobs(jobs)
    watches = tmp_path / "watches.yaml"
    watches.write_text(LAUGHS, encoding="utf-8")
    assert "watches.yaml line 1: YAML aliases expand" in (read_watches(watches, None).error or "")


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "folder", "oversized"])
def test_what_is_not_a_small_regular_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "jobs.yaml"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes it: a blocking read would wait for ever
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")  # a read would never end
    elif kind == "folder":
        path.mkdir()
    else:
        with path.open("wb") as handle:
            handle.truncate(user_files.MAX_FILE_BYTES + 1)
    said = {
        "fifo": "is a FIFO, not a regular file: refused unread",
        "dev_zero": "is a device, not a regular file: refused unread",
        "folder": "is a folder, not a regular file: refused unread",
        "oversized": "is 4,194,305 bytes, over the 4,194,304-byte limit of a jobs file: refused unread",
    }[kind]
    assert user_files.refusal(path, "a jobs file") == said
    with pytest.raises(UserFileError) as raised:
        read_text(path, f"GPUPLAN_JOBS {path}", "a jobs file")
    assert str(raised.value) == f"GPUPLAN_JOBS {path}: {said}"


def test_text_is_utf8_with_a_bom_dropped_and_other_bytes_named(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_bytes("\ufeff- gpu: H100\n".encode())
    assert read_text(path) == "- gpu: H100\n"
    path.write_bytes(b"- gpu: H100\n  note: \xff\n")
    with pytest.raises(UserFileError, match=r"w\.yaml: is not UTF-8 text \(byte 20\); save it as UTF-8$"):
        read_text(path)
    with pytest.raises(UserFileError, match=r"nowhere\.yaml: not found$"):
        read_text(tmp_path / "nowhere.yaml")


def test_an_error_is_one_bounded_line_that_still_names_the_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path.joinpath(*["deep" * 10] * 5)  # a path of 240 characters and more
    folder.mkdir(parents=True)
    path = folder / "watches.yaml"
    path.write_text("- gpu: H100\n  below_usd_per_gpu_hour: " + "9" * 5000 + "x\n", encoding="utf-8")
    error = read_watches(path, None).error or ""
    assert len(error) <= MAX_MESSAGE_CHARS and "\n" not in error
    assert error.startswith(f"GPUPLAN_WATCHES {tmp_path}"[:40])
    assert "watches.yaml line 2: below_usd_per_gpu_hour must be a positive number, not '999" in error
    assert error.endswith("…")


def test_an_error_survives_pickling_whole() -> None:
    error = pickle.loads(pickle.dumps(NotAList("f.yaml", "expected a list", 3)))
    assert isinstance(error, NotAList) and (error.source, error.line) == ("f.yaml", 3)
    assert str(error) == "f.yaml line 3: expected a list"


class _Pool(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    sizes: list[Annotated[int, Field(gt=0)]]
    owner: dict[str, str] = {}


@pytest.mark.parametrize(
    ("text", "line", "loc"),
    [
        ("- name: a\n  sizes:\n    - 1\n    - 0\n", 4, ("sizes", 1)),  # a list item: its own line
        ("- name: a\n  sizes: [1]\n  owner:\n    team: [x]\n", 4, ("owner", "team")),  # nested key
        ("- name: a\n  sizes: [1]\n  colour: red\n", 3, ("colour",)),  # an unknown key: its line
        ("- name: a\n", 1, ("sizes",)),  # a missing key: the item's line
    ],
)
def test_a_models_error_is_put_at_the_line_its_location_points_at(
    text: str, line: int, loc: tuple[str | int, ...]
) -> None:
    """`validated` says a pydantic model's error at the line its `loc` names in the file."""
    [item] = _items(text)
    keys = user_files.keys_of(item, "f.yaml", "a mapping", "{key} twice")
    data = {key: user_files.given(value) for key, value in keys.items()}
    with pytest.raises(UserFileError) as caught:
        user_files.validated(TypeAdapter(_Pool), data, item.written, "f.yaml", lambda e: str(e["loc"]))
    assert (caught.value.line, caught.value.problem) == (line, str(loc))


def test_a_key_given_twice_or_an_item_that_is_no_mapping_is_refused_at_its_line() -> None:
    [item] = _items("- name: a\n  sizes: [1]\n  name: b\n")
    with pytest.raises(UserFileError, match=r"^f\.yaml line 3: name twice$"):
        user_files.keys_of(item, "f.yaml", "a mapping", "{key} twice")
    [item] = _items("- just text\n")
    with pytest.raises(UserFileError, match=r"^f\.yaml line 1: a mapping$"):
        user_files.keys_of(item, "f.yaml", "a mapping", "{key} twice")
