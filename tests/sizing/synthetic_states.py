"""Model states for a bare parameter count, shared by the sizing tests that pin memory and time
terms by hand."""

from __future__ import annotations

from dataclasses import replace

from sizing.methods import StateBytes, UnitBytes


def mixed_adam_states(params: int, largest_module: int = 0, **units: UnitBytes | float) -> StateBytes:
    """16 B/param mixed-precision Adam (ZeRO §3.1): bf16 weights and gradients 2 + 2, fp32 master
    and moments 12, and the 4-byte fp32 gradient DeepSpeed and Megatron keep; every gathered unit
    the largest module in bf16 with its bf16 gradient, unless `units` (StateBytes fields) say
    otherwise."""
    module = UnitBytes(2 * largest_module, 2 * largest_module)
    states = StateBytes(
        weights=2 * params,
        gradients=2 * params,
        optimizer=12 * params,
        fp32_gradient_bytes=4 * params,
        params=params,
        trainable_params=params,
        layer=module,
        embedding=module,
        lm_head=module,
        module=module,
    )
    return replace(states, **units)  # type: ignore[arg-type]
