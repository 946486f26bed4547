"""scrapers/rows.py: rows out of an answer, complete or not, their fields."""

from __future__ import annotations

from typing import Any

import pytest

from scrapers import parsing, rows


def test_dig_returns_the_node_or_names_what_is_missing() -> None:
    payload = {"data": {"gpuTypes": [{"id": "x"}]}}
    assert rows.dig(payload, "data", "gpuTypes") == [{"id": "x"}]
    assert rows.dig(payload, "data", "gpuTypes", 0, expect=dict) == {"id": "x"}
    with pytest.raises(parsing.LayoutChanged, match=r"no 'gpuTypes' at \['data'\] \(found: cpuTypes\)"):
        rows.dig({"data": {"cpuTypes": []}}, "data", "gpuTypes")
    with pytest.raises(parsing.LayoutChanged, match=r"expected a list at \['data'\], got dict"):
        rows.dig(payload, "data")
    with pytest.raises(parsing.LayoutChanged, match="no item 3"):
        rows.dig(payload, "data", "gpuTypes", 3)


def test_rows_are_a_list_or_an_object_of_rows_keyed_by_name() -> None:
    assert rows.rows_at([{"id": 1}], ()) == [{"id": 1}]
    keyed = {"data": {"gpu_1x_a10": {"price": 75}, "note": "not a row"}}
    assert rows.rows_at(keyed, ("data",), keyed_by="name") == [{"name": "gpu_1x_a10", "price": 75}]
    with pytest.raises(parsing.LayoutChanged, match="expected a dict at"):
        rows.rows_at({"data": []}, ("data",), keyed_by="name")


def test_fields_are_keys_or_paths_into_the_row() -> None:
    row: dict[str, Any] = {"gpu_model": " ", "machine": {"hardware": {"gpu": {"gpuName": "RTX 4090"}}}}
    assert rows.value_at(row, ("machine", "hardware", "gpu", "gpuName")) == "RTX 4090"
    assert rows.value_at(row, ("machine", "unit", "total")) is None
    assert rows.value_at({"machine": "not an object"}, ("machine", "gpu")) is None
    assert rows.named(row, ("gpu_model", ("machine", "hardware", "gpu", "gpuName"))) == ["RTX 4090"]


def test_kept_fields_say_something() -> None:
    assert rows.kept({"a": 1, "b": None, "c": "", "d": 0}, ("a", "b", "c", "d", "e")) == {"a": 1, "d": 0}


def test_split_complete() -> None:
    found = [{"id": 1, "price": 2.0}, {"id": 2, "price": None}, "junk"]
    complete, incomplete = rows.split_complete(found, ("id", "price"), "offers")
    assert complete == [{"id": 1, "price": 2.0}]
    assert incomplete == [{"id": 2, "price": None}, "junk"]
    with pytest.raises(parsing.EmptyResult, match="no offers"):
        rows.split_complete([], ("id",), "offers")
    with pytest.raises(parsing.LayoutChanged, match=r"none of the 1 offers .* \(id\); the first has: ask_id"):
        rows.split_complete([{"ask_id": 1}], ("id",), "offers")


def test_a_row_that_names_no_gpu_is_incomplete() -> None:
    names = ("gpu_model", ("hardware", "gpuName"))
    found = [
        {"id": 1, "gpu_model": "A100"},
        {"id": 2, "hardware": {"gpuName": "H100"}},
        {"id": 3, "gpu_model": ""},
    ]
    complete, incomplete = rows.split_complete(found, ("id",), "pools", names)
    assert [row["id"] for row in complete] == [1, 2] and incomplete == [{"id": 3, "gpu_model": ""}]
    with pytest.raises(parsing.LayoutChanged, match=r"\(id, gpu_model or hardware.gpuName\)"):
        rows.split_complete([{"id": 3}], ("id",), "pools", names)
