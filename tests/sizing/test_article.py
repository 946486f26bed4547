"""sizing/article.py: the seed article's rule and recommendations beside our estimate."""

from __future__ import annotations

import pytest

from sizing.article import claims, compare
from sizing.catalog import find_gpu


def test_every_recommended_gpu_is_in_the_catalog():
    for claim in claims():
        assert claim.quote
        if claim.gpu_model:
            assert find_gpu(claim.gpu_model).gpu_model == claim.gpu_model


@pytest.mark.parametrize("size", ["7B", "13B", "30B", "70B"])
def test_the_3_to_4x_rule_is_far_below_mixed_precision_adamw(size):
    comparison = compare(size, "full")
    params_b = comparison.params / 1e9
    assert comparison.rule_gb == pytest.approx((3 * params_b, 4 * params_b))
    # 16 B/param of model states alone is four times the rule's top
    assert comparison.ours_gb > 4 * comparison.rule_gb[1]
    assert any("optimizer" in line and "leaves out" in line for line in comparison.explanation)
    # none of the article's single- or few-GPU recommendations holds a full AdamW run
    assert comparison.gpu_checks
    for check in comparison.gpu_checks:
        assert not check.fits
        assert check.our_gpu_count is None or check.our_gpu_count > check.article_gpu_count


def test_the_lora_figure_matches_qlora_not_lora():
    lora, qlora = compare("7B", "lora"), compare("7B", "qlora")
    assert lora.size_claim is not None and lora.size_claim.memory_gb_low == 10
    assert lora.ours_gb > 10 > qlora.ours_gb
    assert lora.gpu_checks[0].gpu_model == "RTX 4090 24GB" and lora.gpu_checks[0].fits


def test_no_article_figure_is_said_so():
    assert compare("405B", "full").size_claim is None
    freeze = compare("7B", "freeze")
    assert freeze.rule_gb is None and freeze.size_claim is None
    assert "no figure" in freeze.explanation[0]
