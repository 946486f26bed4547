"""scrapers/registry.py: the platforms are Scrapy's spider loader's, and a name a person types is
read against them."""

from __future__ import annotations

import pytest

from scrapers.registry import UnknownPlatform, platform, platforms


def test_a_platform_is_its_slug_in_any_case() -> None:
    assert platform("RunPod") == "runpod"
    assert platform(" vastai ") == "vastai"


@pytest.mark.parametrize(
    "name, said",
    [
        ("nosuch", "unknown platform 'nosuch'; did you mean 'oci'?"),
        ("runpd", "unknown platform 'runpd'; did you mean 'runpod', 'datacrunch'?"),
        ("lambdalabs", "unknown platform 'lambdalabs'; did you mean 'lambda', 'jarvislabs'?"),
    ],
)
def test_an_unknown_platform_is_refused_naming_the_nearest(name: str, said: str) -> None:
    with pytest.raises(UnknownPlatform) as refused:
        platform(name)
    assert str(refused.value) == said


def test_a_name_near_none_lists_every_platform() -> None:
    with pytest.raises(UnknownPlatform, match="unknown platform 'xyzzyq'; known: ") as refused:
        platform("xyzzyq")
    assert str(refused.value).endswith(", ".join(platforms()))
