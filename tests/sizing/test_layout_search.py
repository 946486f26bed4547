"""The planner's search across nodes (sizing/fabric.py `fastest_option`, `StepClock.tokens_bounds`):
pruned by a ceiling per layout, it must keep exactly the option that timing every fitting option
keeps, ties to the earlier; and each ceiling is the step without its collectives and update."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sizing import fabric, throughput
from sizing.catalog import find_gpu, load_gpus
from sizing.parallel import Layout
from sizing.planner import prepare
from sizing.setup import TrainingSetup

SETUPS = [
    ("7B", "full", TrainingSetup(framework="megatron")),
    ("13B", "lora", TrainingSetup()),
    ("70B", "full", TrainingSetup(framework="megatron", internode_gb_per_s=2.5)),
    ("mixtral-8x7b", "full", TrainingSetup(framework="torchtune", internode_gb_per_s=12.5)),
]


@pytest.mark.parametrize(("model", "method", "setup"), SETUPS, ids=[f"{m} {k}" for m, k, _ in SETUPS])
def test_the_pruned_search_keeps_what_timing_every_option_keeps(model, method, setup):
    sizing = prepare(model, method, setup)
    compared = 0
    for gpu in load_gpus():
        for count in (16, 32, 64):
            row = sizing.requirement(gpu, count)
            if not row.fits or count <= gpu.gpus_per_node:
                continue
            _, groups, _ = sizing._fitting_options(count, gpu.usable_memory_gb, gpu.gpus_per_node)
            every = [option for group in groups for option in group]
            timed = [sizing.clock.tokens_per_second(gpu, count, o.stage, o.layout)[0] for o in every]
            best = max(range(len(every)), key=timed.__getitem__)  # the first of equals
            assert (row.tp, row.pp, row.zero_stage) == (
                every[best].layout.tp,
                every[best].layout.pp,
                every[best].stage,
            )
            assert row.tokens_per_second == timed[best]
            compared += 1
    assert compared > 50


def test_a_layouts_ceiling_is_its_step_without_collectives_or_update():
    sizing = prepare("7B", "full", TrainingSetup(framework="megatron"))
    clock, w, gpu = sizing.clock, sizing.work, find_gpu("H100 SXM 80GB")
    for layout, count in ((Layout(1, 1), 16), (Layout(4, 1), 16), (Layout(8, 2), 32)):
        virtual = sizing.setup.virtual_stages_for(w.spec.layers, layout.pp)
        lw = throughput.layout_work(w, layout, virtual)
        rates = throughput.gpu_rates(gpu, sizing.setup.efficiency, w.attention_kernel)
        microbatch = throughput.microbatch_seconds(w, gpu, rates, lw, sizing.setup.internode_gb_per_s)
        # (ga + (p - 1)/v) micro-batch slots, each replica's ga micro-batches of tokens
        slots = (w.grad_accum + (layout.pp - 1) / virtual) * microbatch
        expected = count // layout.model_parallel * w.grad_accum * w.tokens_per_microbatch / slots
        (ceiling,) = clock.tokens_bounds(gpu, count, [layout])
        assert ceiling == pytest.approx(expected, rel=1e-12)
        for stage in (0, 1):
            assert clock.tokens_per_second(gpu, count, stage, layout)[0] < ceiling


def _search(groups, ceilings, speeds):
    asked = []

    def rates(group):
        asked.append(group)
        return [(speed, 0.5) for speed in speeds[group]]

    return fabric.fastest_option(groups, ceilings, rates), asked


def test_search_order_ties_and_pruning():
    # the highest ceiling first; a ceiling under the best found is never timed
    (best, rate), asked = _search([["a", "b"], ["c"], ["d"]], [10.0, 20.0, 5.0], [[9.0, 8.0], [15.0], [4.0]])
    assert (best, rate, asked) == ("c", (15.0, 0.5), [1])
    # a tie keeps the option the planner prefers (the earlier group), whichever is timed first
    (best, _), asked = _search([["a"], ["b"]], [13.0, 20.0], [[12.0], [12.0]])
    assert (best, asked) == ("a", [1, 0])
    (best, _), _ = _search([["a", "b"]], [20.0], [[7.0, 7.0]])
    assert best == "a"
    # a ceiling equal to the best is still timed (it may tie an earlier option)
    (best, _), asked = _search([["a"], ["b"]], [12.0, 20.0], [[12.0], [12.0]])
    assert (best, asked) == ("a", [1, 0])
    with pytest.raises(ValueError):
        fabric.fastest_option([], [], lambda group: [])


def test_a_card_exactly_at_the_a100s_throttle_point_throttles():
    l40 = find_gpu("L40 48GB")  # 300 W
    at_the_point = replace(l40, bf16_dense_tflops=312 * 300 / 400)
    assert not throughput.holds_clock(at_the_point)
    assert throughput.holds_clock(replace(l40, bf16_dense_tflops=233.0))
    assert throughput.matmul_ceiling(at_the_point) == 794.5 / 989
