"""The jobs file (GPUPLAN_JOBS): YAML read into `sizing.jobs.Job` values, with the line of every problem.

The YAML is composed into nodes (not loaded into Python values), so each value keeps its line and
is read as written: `tokens: 1.5e9` stays the text 1.5e9 (YAML 1.1 would read it as a string
anyway, and `2B` could never be a number). The rules of a job live in `sizing.jobs`.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from sizing.jobs import Job, JobsFileError, Written, WrittenJob, jobs_from


def _written(node: yaml.Node) -> Written:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.ScalarNode):
        return Written(line, text=str(node.value))
    if isinstance(node, yaml.SequenceNode):
        return Written(line, items=tuple(_written(item) for item in node.value))
    return Written(line)


def _written_job(node: yaml.Node) -> WrittenJob:
    if not isinstance(node, yaml.MappingNode):
        return WrittenJob(node.start_mark.line + 1, None)
    pairs = tuple((_written(key), _written(value)) for key, value in node.value)
    return WrittenJob(node.start_mark.line + 1, pairs)


def parse_jobs(text: str, source: str = "jobs file", base: Path | None = None) -> list[Job]:
    """The jobs of a jobs file's text; `source` names it in errors, `base` is its folder.

    Raises JobsFileError naming the line of the first problem. An empty file holds no jobs.
    """
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" line {mark.line + 1}" if mark else ""
        raise JobsFileError(f"{source}{line}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise JobsFileError(f"{source}: not valid YAML: {' '.join(str(exc).split())}") from None
    if root is None:
        return []
    if not isinstance(root, yaml.SequenceNode):
        first = root.start_mark.line + 1
        raise JobsFileError(f"{source} line {first}: the file must be a list of jobs (- name: ...)")
    return jobs_from([_written_job(item) for item in root.value], source, base)


def read_jobs(path: Path) -> list[Job]:
    """The jobs of the jobs file at `path`; raises JobsFileError (file, line, problem)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JobsFileError(f"jobs file {path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JobsFileError(f"jobs file {path} cannot be read: {' '.join(str(exc).split())}") from None
    return parse_jobs(text, str(path), path.parent)
