"""warehouse/requirements.py: the job sizes sized for each GPU, the requirements frame, many days."""

from __future__ import annotations

import pandas as pd
import pytest

from sizing.catalog import find_gpu
from warehouse.daily_plans import REQUIREMENT_COLUMNS
from warehouse.requirements import plan_gpu_counts, requirements_frame


@pytest.mark.parametrize(
    ("gpus_per_node", "unit_sizes", "expected"),
    [
        # cards picked on one node
        (8, [], [1, 2, 3, 4, 5, 6, 7, 8]),
        # a 10-GPU machine and a 16-GPU cluster on offer; 128 is past the largest job
        (8, [10, 16, 128], [1, 2, 3, 4, 5, 6, 7, 8, 10, 16]),
        # one GPU per node (GH200): only the units as sold
        (1, [1, 32], [1, 32]),
    ],
)
def test_plan_gpu_counts(gpus_per_node, unit_sizes, expected):
    assert plan_gpu_counts(gpus_per_node, unit_sizes) == expected


def test_requirements_frame_sizes_each_gpu_at_its_own_counts():
    gpus = [find_gpu("RTX 4090 24GB"), find_gpu("H100 SXM 80GB")]
    units = pd.DataFrame({"gpu_model": ["RTX 4090 24GB"], "gpu_count": [10]})
    frame = requirements_frame(["7B"], ["lora", "full"], gpus, units)

    assert set(REQUIREMENT_COLUMNS) <= set(frame.columns)
    counts = frame.groupby("gpu_model")["gpu_count"].apply(lambda c: sorted(set(c)))
    assert 10 in counts["RTX 4090 24GB"] and 10 not in counts["H100 SXM 80GB"]
    assert set(frame["gpus_per_node"]) == {8}
    # 7B LoRA fits one H100; full fine-tuning of 7B does not (about 16 bytes per parameter)
    one_h100 = frame[(frame["gpu_model"] == "H100 SXM 80GB") & (frame["gpu_count"] == 1)].set_index("method")
    assert one_h100.loc["lora", "fits"] and not one_h100.loc["full", "fits"]
