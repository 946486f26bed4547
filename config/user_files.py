"""The user's own files (GPUPLAN_JOBS, GPUPLAN_WATCHES, GPUPLAN_NOTIFY, GPUPLAN_QUOTES_FILE): read
with one set of guards, and their YAML read as written, with the line of every value.

Every hand-written file is read through here, so the guards against a hostile or careless file
have one home:
- `refusal(path)`, `read_text(path)`: a path that is not a regular file (a FIFO would block the
  reader for ever, /dev/zero never ends, a folder) or a file over `MAX_FILE_BYTES` is refused
  unread. `read_text` opens without blocking and judges what it opened (fstat), so a path swapped
  for a FIFO after a look cannot hang it, and reads at most the limit whatever the size says.
- `yaml_list(text, ...)`: the file's one list, each item `Written` as it stands in the file (text
  as written, the line of every key and value) beside the value YAML's safe loader builds. An item
  whose aliases expand past `MAX_ITEM_VALUES` values, or refer to the item they are in, is refused
  before anything is built from it (a "billion laughs" file costs nothing), and so is every item
  once the file's aliases have added `MAX_ALIAS_VALUES` values; the file's other items still read.
- `keys_of(item, ...)` and `given(written)`: an item's keys as written (a key given twice
  refused) and the values a model is given, each as its text; `line_of(written, loc)`: the line
  of a pydantic error's location, so a model's error names the line it is about.
- Every problem is a `UserFileError`: one line of at most `MAX_MESSAGE_CHARS` characters, naming
  the file and, where there is one, the line.

What an item means (a job, a watch, a channel, a quote) is its reader's model: `config.jobs_file`,
`config.watches_file`, `config.notify_file`, `scrapers.quotes.file`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

# A hand-kept file of a thousand quotes is about 200 KB, a jobs or watches file a few KB; 4 MiB is
# twenty times the largest. A larger file is not one of these (a log, a database, an export of
# something else), and the whole file is read into memory.
MAX_FILE_BYTES = 4 * 1024 * 1024
# Values (scalars and collections, an alias counted each time it is used) one item may expand to.
# A quote is ~15 fields, a job 12, a watch 4; 1,000 leaves room for any note and stops a "billion
# laughs" item (9 levels of 9 aliases: 387 million values) before it is built.
MAX_ITEM_VALUES = 1_000
# Values aliases may add over the whole file (beyond what is written in it): shared defaults
# (`<<: *base`, ~5 fields) in each of 10,000 quotes add 50,000. Past it every later item is
# refused, so a file of many small bombs (`- *a` a million times) costs no more than one.
MAX_ALIAS_VALUES = 100_000
# An error is one line a person reads in a terminal, a log or a mail: the file, the line, the
# problem. A long value quoted in the problem is cut, never the place.
MAX_MESSAGE_CHARS = 300
_MAX_SOURCE_CHARS = 160
_DEVICES = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


class UserFileError(ValueError):
    """A user's file that cannot be used: `source` (how the file is named), the 1-based `line` of
    the problem when there is one, and `problem`; its message is `message(source, problem, line)`."""

    def __init__(self, source: str, problem: str, line: int | None = None) -> None:
        self.source, self.problem, self.line = source, problem, line
        super().__init__(message(source, problem, line))

    def __reduce__(self) -> tuple[type[UserFileError], tuple[str, str, int | None]]:
        return type(self), (self.source, self.problem, self.line)  # pickled whole (a step's error)


class NotAList(UserFileError):
    """The file is YAML, but not the list of items it must be."""


def message(source: str, problem: str, line: int | None = None) -> str:
    """'<source> line <line>: <problem>' on one line of at most MAX_MESSAGE_CHARS characters."""
    place = _shortened(" ".join(source.split()), _MAX_SOURCE_CHARS, middle=True)
    place += f" line {line}" if line is not None else ""
    return f"{place}: {_shortened(' '.join(problem.split()), MAX_MESSAGE_CHARS - len(place) - 2)}"


def _shortened(text: str, limit: int, *, middle: bool = False) -> str:
    if len(text) <= limit:
        return text
    if middle:  # a path: its start and its file name both say which file
        half = (limit - 1) // 2
        return f"{text[:half]}…{text[len(text) - (limit - 1 - half) :]}"
    return text[: limit - 1] + "…"


# --- the file ---------------------------------------------------------------------------------


def refusal(path: Path, what: str = "a user's file", max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """Why `path` is refused before it is read, or None. Links are followed (a link to /dev/zero
    is a device); a missing file is left to the read, which says so. `what` names the kind of
    file in the size limit's message ("a quotes file")."""
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    return _refused(found, what, max_bytes)


def _refused(found: os.stat_result, what: str, max_bytes: int) -> str | None:
    if not stat.S_ISREG(found.st_mode):
        kind = next((name for test, name in _DEVICES if test(found.st_mode)), "not a plain file")
        return f"is {kind}, not a regular file: refused unread"
    if found.st_size > max_bytes:
        return f"is {found.st_size:,} bytes, over the {max_bytes:,}-byte limit of {what}: refused unread"
    return None


def read_text(
    path: Path, source: str | None = None, what: str = "a user's file", max_bytes: int = MAX_FILE_BYTES
) -> str:
    """The UTF-8 text of the user's file at `path` (a BOM, as Excel and Notepad write it, dropped).

    Raises UserFileError naming `source` (default: the path): not found, not a regular file, over
    `max_bytes`, unreadable, not UTF-8.
    """
    name = source or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UserFileError(name, "not found") from None
    except OSError as error:
        raise UserFileError(name, f"cannot be read ({error.strerror or error})") from None
    try:
        refused = _refused(os.fstat(fd), what, max_bytes)
        if refused is not None:
            raise UserFileError(name, refused)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes and (chunk := os.read(fd, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise UserFileError(name, f"cannot be read ({error.strerror or error})") from None
    finally:
        os.close(fd)
    if size > max_bytes:  # it grew after fstat looked at it
        raise UserFileError(name, f"is over the {max_bytes:,}-byte limit of {what}: refused")
    try:
        return b"".join(chunks).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UserFileError(name, f"is not UTF-8 text (byte {error.start}); save it as UTF-8") from None


# --- its YAML ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Written:
    """What a YAML file says at one place, as written: one value (`text`), a list (`items`), or a
    mapping (`pairs`: (key, value) in the file's order, a key given twice kept twice); `line` is
    where it starts (1-based), and `value` what YAML's safe loader makes of it (a number, a date, a
    list, a dict with merge keys applied). A merge key (`<<`) is a pair like any other."""

    line: int
    text: str | None = None
    items: tuple[Written, ...] | None = None
    pairs: tuple[tuple[Written, Written], ...] | None = None
    value: Any = None


@dataclass(frozen=True)
class Item:
    """One item of the file's list, or why nothing was built from it (`refused`; then `written`
    holds only its line)."""

    written: Written
    refused: str | None = None

    @property
    def line(self) -> int:
        return self.written.line


def yaml_list(text: str, source: str, items: str, example: str) -> list[Item]:
    """The items of YAML `text` that must be one list (an empty file, or only comments: none).

    `source` names the file in errors; `items` and `example` say what the list holds ("jobs",
    "- name: ..."). Raises UserFileError for text that is not YAML (at its line) or is nested too
    deeply, NotAList for YAML that is not a list. An item refused for its aliases, or whose values
    YAML cannot build (a date that does not exist), is an `Item` with `refused` said.
    """
    loader = yaml.SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.YAMLError as error:
            raise UserFileError(source, f"not valid YAML: {_problem(error)}", _line(error)) from None
        except RecursionError:
            raise UserFileError(source, f"nested too deeply to be a list of {items}") from None
        if root is None:
            return []
        if not isinstance(root, yaml.SequenceNode):
            raise NotAList(source, f"expected a list of {items} ({example})", root.start_mark.line + 1)
        expansion = _Expansion()
        return [_item(loader, node, expansion) for node in root.value]
    finally:
        loader.dispose()


def _item(loader: yaml.SafeLoader, node: yaml.Node, expansion: _Expansion) -> Item:
    line = node.start_mark.line + 1
    refused = expansion.problem(node)
    if refused is not None:
        return Item(Written(line), refused)
    pairs = _pairs_as_written(node)  # before building: merge keys rewrite a mapping's pairs
    try:
        loader.construct_object(node, deep=True)
        written: dict[int, Written] = {}
        return Item(_written(loader, node, pairs, written))
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as error:
        problem = _problem(error) if isinstance(error, yaml.YAMLError) else str(error)
        return Item(Written(line), f"its values cannot be read: {problem}")


def _pairs_as_written(node: yaml.Node) -> dict[int, list[tuple[yaml.Node, yaml.Node]]]:
    """id(mapping node) -> its pairs as written, for every mapping in `node` (walked once each)."""
    found: dict[int, list[tuple[yaml.Node, yaml.Node]]] = {}
    seen: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, yaml.MappingNode):
            found[id(current)] = list(current.value)
            stack += [part for pair in current.value for part in pair]
        elif isinstance(current, yaml.SequenceNode):
            stack += current.value
    return found


def _written(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    pairs: dict[int, list[tuple[yaml.Node, yaml.Node]]],
    done: dict[int, Written],
) -> Written:
    """`node` as Written (an anchor used twice is one object); its value from the loader."""
    if id(node) in done:
        return done[id(node)]
    line = node.start_mark.line + 1
    if node in loader.constructed_objects:
        value = loader.constructed_objects[node]
    elif isinstance(node, yaml.ScalarNode):  # a merge key: never built, it is said by its pairs
        value = node.value
    else:  # a mapping only merged into others: built now
        value = loader.construct_object(node, deep=True)
    if isinstance(node, yaml.ScalarNode):
        result = Written(line, text=str(node.value), value=value)
    elif isinstance(node, yaml.SequenceNode):
        items = tuple(_written(loader, item, pairs, done) for item in node.value)
        result = Written(line, items=items, value=value)
    else:
        written_pairs = tuple(
            (_written(loader, key, pairs, done), _written(loader, part, pairs, done))
            for key, part in pairs[id(node)]
        )
        result = Written(line, pairs=written_pairs, value=value)
    done[id(node)] = result
    return result


def keys_of(item: Item, source: str, not_a_mapping: str, twice: str) -> dict[str, Written]:
    """The keys of `item`, a mapping, and each one's value as written. UserFileError at the line
    for an item refused by `yaml_list`, one that is no mapping (`not_a_mapping`), a key that is a
    list or a mapping or given twice (`twice`, its `{key}` the key)."""
    if item.refused is not None:
        raise UserFileError(source, item.refused, item.line)
    if item.written.pairs is None:
        raise UserFileError(source, not_a_mapping, item.line)
    values: dict[str, Written] = {}
    for key, value in item.written.pairs:
        if key.text is None or key.text in values:
            named = key.text if key.text is not None else key.value
            raise UserFileError(source, twice.format(key=named), key.line)
        values[key.text] = value
    return values


def given(written: Written) -> Any:
    """What a model is given for `written`: each value as its text (`4090` the name, `1e3` and `4_8`
    text for the model's own number rules), None where YAML reads null; lists and mappings as such."""
    if written.items is not None:
        return [given(item) for item in written.items]
    if written.pairs is not None:
        return {key.text: given(value) for key, value in written.pairs}
    return None if written.value is None else written.text


def line_of(written: Written, loc: Sequence[int | str]) -> int:
    """The line of what a validation error's location (`loc`: keys and list indexes) points at in
    `written`; a part that names nothing written (a union's tag) is passed over."""
    line = written.line
    for part in loc:
        if isinstance(part, int) and written.items is not None and 0 <= part < len(written.items):
            written = written.items[part]
        elif written.pairs is not None and (found := [v for k, v in written.pairs if k.text == part]):
            written = found[0]
        else:
            continue
        line = written.line
    return line


Model = TypeVar("Model")
# A model's errors, the first said: an unknown key, then a missing one, then a value's (file order).
_FIRST = {"extra_forbidden": 0, "missing": 1}


def validated(
    model: TypeAdapter[Model],
    data: Mapping[str, Any],
    written: Written,
    source: str,
    words: Callable[[ErrorDetails], str],
    context: Any = None,
) -> Model:
    """`data` (from `written`) as `model`; else UserFileError: the first error (`_FIRST`) in
    `words`, at the line its location points at."""
    try:
        return model.validate_python(data, context=context)
    except ValidationError as error:
        first = min(error.errors(), key=lambda found: _FIRST.get(found["type"], 2))
        raise UserFileError(source, words(first), line_of(written, first["loc"])) from None


def said(error: ErrorDetails) -> str:
    """A model's own words for `error` (a validator's ValueError without pydantic's prefix)."""
    return error["msg"].removeprefix("Value error, ")


class _Expansion:
    """What the file's items expand to, aliases counted each time they are used, item by item.

    A node's expanded size is kept once it is known (a shared anchor is walked once), and the
    values aliases add to an item are its expanded size less the nodes first written in it.
    """

    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}
        self.added = 0

    def problem(self, node: yaml.Node) -> str | None:
        known = len(self.sizes)
        try:
            expanded = self._size(node, frozenset())
        except _SelfReference:
            return "a YAML alias refers to the item it is in: refused"
        if expanded > MAX_ITEM_VALUES:
            return (
                f"YAML aliases expand this item past {MAX_ITEM_VALUES:,} values "
                "(a 'billion laughs' file?): refused, nothing built from it"
            )
        self.added += expanded - (len(self.sizes) - known)
        if self.added > MAX_ALIAS_VALUES:
            return (
                f"YAML aliases in this file expand past {MAX_ALIAS_VALUES:,} values by here: "
                "refused, nothing built from it"
            )
        return None

    def _size(self, node: yaml.Node, active: frozenset[int]) -> int:
        key = id(node)
        if key in active:
            raise _SelfReference
        if key not in self.sizes:
            children: list[yaml.Node] = []
            if isinstance(node, yaml.SequenceNode):
                children = list(node.value)
            elif isinstance(node, yaml.MappingNode):
                children = [part for pair in node.value for part in pair]
            total = 1
            for child in children:
                total += self._size(child, active | {key})
                if total > MAX_ITEM_VALUES:
                    break  # too many already: the rest need not be counted
            self.sizes[key] = total
        return self.sizes[key]


class _SelfReference(Exception):
    pass


def _line(error: yaml.YAMLError) -> int | None:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    return mark.line + 1 if mark is not None else None


def _problem(error: yaml.YAMLError) -> str:
    return getattr(error, "problem", None) or getattr(error, "context", None) or str(error)
