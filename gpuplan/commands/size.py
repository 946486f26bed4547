"""`gpuplan size`: memory, GPU count and throughput for training a model with a method."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, TypeAlias

import typer
from rich.console import Console
from rich.text import Text

from config import model_files
from gpuplan import display
from gpuplan.assumed import print_assumptions
from gpuplan.options import METHOD_HELP, training_method
from sizing import article, assumptions, frameworks, gpu_names, planner
from sizing import setup as setup_vocabulary
from sizing.catalog import find_gpu
from sizing.fabric import DEFAULT_INTERNODE_GBPS_PER_GPU, MAX_INTERNODE_GBPS
from sizing.parallel import DATA_PARALLEL
from sizing.planner import Estimate, Requirement
from sizing.setup import DEFAULT, MAX_COUNT, MAX_SEQ_LEN, TrainingSetup


def _choices(name: str, values: tuple[str, ...]) -> type[StrEnum]:
    """A CLI choice type whose values are sizing's vocabulary (the one home of these names)."""
    return StrEnum(name, {value: value for value in values})  # type: ignore[return-value]


if TYPE_CHECKING:  # built at run time from sizing's tuples; to a type checker, string enums
    Framework: TypeAlias = StrEnum
    Checkpointing: TypeAlias = StrEnum
    Offload: TypeAlias = StrEnum
    Optimizer: TypeAlias = StrEnum
    Loss: TypeAlias = StrEnum
    OptimizerStep: TypeAlias = StrEnum
    Accounting: TypeAlias = StrEnum
else:
    Framework = _choices("Framework", frameworks.FRAMEWORKS)
    Checkpointing = _choices("Checkpointing", setup_vocabulary.CHECKPOINTING)
    Offload = _choices("Offload", setup_vocabulary.OFFLOAD)
    Optimizer = _choices("Optimizer", setup_vocabulary.OPTIMIZERS)
    Loss = _choices("Loss", frameworks.LOSSES)
    OptimizerStep = _choices("OptimizerStep", setup_vocabulary.OPTIMIZER_STEPS)
    Accounting = _choices("Accounting", setup_vocabulary.ACCOUNTING)
_DEFAULT_FRAMEWORK = Framework(frameworks.DEFAULT_FRAMEWORK)
_NO_OFFLOAD = Offload("none")


def _breakdown_json(breakdown: planner.Breakdown) -> dict[str, float]:
    return {name: round(gb, 3) for name, gb in breakdown.as_dict().items()}


def _plan_json(row: Requirement) -> dict[str, Any]:
    return {
        "gpu": row.gpu_model,
        "gpu_count": row.gpu_count,
        "fits": row.fits,
        "zero_stage": row.zero_stage,
        "tp": row.tp,
        "pp": row.pp,
        "per_gpu_memory_gb": round(row.per_gpu_memory_gb, 3),
        "usable_memory_gb": round(row.usable_memory_gb, 3),
        "tokens_per_second": round(row.tokens_per_second, 1),
        "tokens_per_day": round(row.tokens_per_day),
        "mfu": round(row.mfu, 4),
        "nodes": row.nodes,
        "multi_node": row.multi_node,
    }


def _single_json(single: Estimate) -> dict[str, Any]:
    row = single.requirement
    return {
        "gpu": row.gpu_model if row else None,
        "gpu_count": single.gpu_count,
        "zero_stage": single.zero_stage,
        "tp": single.layout.tp,
        "pp": single.layout.pp,
        "per_gpu_memory_gb": round(single.per_gpu.total, 3),
        "per_gpu_breakdown_gb": _breakdown_json(single.per_gpu),
        "usable_memory_gb": round(row.usable_memory_gb, 3) if row else None,
        "fits": row.fits if row else None,
        "tokens_per_second": round(row.tokens_per_second, 1) if row else None,
        "tokens_per_day": round(row.tokens_per_day) if row else None,
        "mfu": round(row.mfu, 4) if row else None,
        "cpu_memory_gb": round(single.sizing.cpu_memory_gb(), 3),
    }


def _settings_json(setup: TrainingSetup) -> dict[str, Any]:
    return {
        "framework": setup.framework,
        "seq_len": setup.seq_len,
        "micro_batch": setup.micro_batch,
        "grad_accum": setup.grad_accum,
        "checkpointing": setup.checkpointing,
        "flash_attention": setup.flash_attention,
        "optimizer": setup.optimizer,
        "paged_optimizer": setup.paged_optimizer,
        "optimizer_in_backward": setup.optimizer_in_backward,
        "loss": setup.loss,
        "lora_rank": setup.lora_rank,
        "lora_targets": list(setup.lora_targets),
        "freeze_trainable_layers": setup.freeze_trainable_layers,
        "offload": setup.offload,
        "zero_stage": setup.zero_stage,
        "tp": setup.tp,
        "pp": setup.pp,
        "sequence_parallel": setup.uses_sequence_parallel,
        "mfu": setup.mfu,
        "stack_efficiency": setup.efficiency,
        "state_accounting": setup.sharded_accounting,
        "internode_gbps_per_gpu": setup.internode_gb_per_s * 8,
    }


def _article_json(comparison: article.Comparison) -> dict[str, Any]:
    claim = comparison.size_claim
    return {
        "source": article.ARTICLE_TITLE,
        "rule_gb": [round(gb, 1) for gb in comparison.rule_gb] if comparison.rule_gb else None,
        "size_class_gb": [claim.memory_gb_low, claim.memory_gb_high] if claim else None,
        "ours_gb": round(comparison.ours_gb, 3),
        "gpu_checks": [
            {
                "gpu": check.gpu_model,
                "article_gpu_count": check.article_gpu_count,
                "fits": check.fits,
                "per_gpu_memory_gb": round(check.per_gpu_memory_gb, 3),
                "our_gpu_count": check.our_gpu_count,
            }
            for check in comparison.gpu_checks
        ],
        "explanation": list(comparison.explanation),
    }


def _layout_text(tp: int, pp: int) -> str:
    return "-" if tp * pp == 1 else f"{tp}x{pp}"


MEMORY_COLUMNS = (display.Column("component"), display.Column("GB", "right"))
PLAN_COLUMNS = (
    display.Column("GPU", shrink=True),
    display.Column("count", "right"),
    display.Column("ZeRO", "right"),
    display.Column("TPxPP", "right", drop=2, legend="tensor x pipeline parallel"),
    display.Column("nodes", "right", drop=1),
    display.Column("GB/GPU", "right", legend="memory per GPU"),
    display.Column("usable", "right", drop=3, legend="usable GB"),
    display.Column("Mtok/d", "right", legend="million tokens per day"),
    display.Column("MFU", "right"),
)


# GPU types the table lists that fit (--all: every one): with the rest of the output, 60 lines at 80
# columns; the others that fit are counted in one line, the ones that do not fit named in one.
FITTING_ROWS = 30


@dataclass(frozen=True)
class Shown:
    """How `size` prints: every column (--wide), every assumption (--explain), every GPU (--all)."""

    wide: bool = False
    explain: bool = False
    show_all: bool = False


def _print_tables(
    console: Console,
    sizing: planner.Sizing,
    single: Estimate | None,
    plans: list[Requirement],
    comparison: article.Comparison | None,
    lines: list[str],
    shown: Shown,
) -> None:
    spec = sizing.spec
    console.print(
        f"[bold]{sizing.model}[/bold] ({spec.preset}, {spec.params / 1e9:.2f}B parameters), "
        f"method [bold]{sizing.method}[/bold], framework [bold]{sizing.setup.framework}[/bold]",
        highlight=False,
    )
    # a component this method and setup do not hold (no sharding buffers, no gradients for a frozen
    # base) is no row: the JSON keeps every one
    memory: list[list[str | Text]] = [
        [name, f"{gb:.1f}"] for name, gb in sizing.replica.as_dict().items() if round(gb, 1)
    ]
    memory.append([Text("total", style="bold"), Text(f"{sizing.replica.total:.1f}", style="bold")])
    title = "Memory, one unsharded replica (GB = 1e9 bytes)"
    display.print_table(console, MEMORY_COLUMNS, memory, wide=shown.wide, title=title)
    print_assumptions(console, sizing, lines, explain=shown.explain)
    if single is not None:
        row = single.requirement
        where = f"{single.gpu_count} x {row.gpu_model}" if row else f"{single.gpu_count} GPU(s)"
        layout = "" if single.layout.model_parallel == 1 else f", {single.layout.describe()}"
        parts = ", ".join(f"{name} {gb:.1f}" for name, gb in single.per_gpu.as_dict().items() if gb)
        console.print(
            f"[bold]{where}[/bold], ZeRO-{single.zero_stage}{layout}: {single.per_gpu.total:.1f} GB per GPU "
            f"({parts})",
            highlight=False,
        )
        if row:
            verdict = "[green]fits[/green]" if row.fits else "[red]does not fit[/red]"
            console.print(
                f"  {verdict} in {row.usable_memory_gb:.1f} GB usable; {row.tokens_per_second:,.0f} tokens/s "
                f"({row.tokens_per_day / 1e6:,.0f}M tokens/day), MFU {row.mfu:.0%}",
                highlight=False,
            )
    _print_plans(console, plans, shown)
    if comparison is not None:
        console.print(f"[bold]The article beside us[/bold] ({article.ARTICLE_TITLE})")
        for line in comparison.explanation:
            console.print(f"  - {line}", highlight=False)


def _print_plans(console: Console, plans: list[Requirement], shown: Shown) -> None:
    """The GPU types that fit, fewest GPUs first and the fastest first among as many; the others
    in one line. One plan (--gpus with --gpu) is shown whatever it is."""
    if len(plans) == 1:
        fitting, failing = plans, []
    else:
        fitting = sorted(
            (row for row in plans if row.fits), key=lambda row: (row.gpu_count, -row.tokens_per_day)
        )
        failing = [row for row in plans if not row.fits]
    listed = fitting if shown.show_all else fitting[:FITTING_ROWS]
    rows = [
        [
            row.gpu_model,
            str(row.gpu_count) if row.fits else f">{row.gpu_count}",
            str(row.zero_stage) if row.fits else "-",
            _layout_text(row.tp, row.pp) if row.fits else "-",
            str(row.nodes) if row.fits else "-",
            f"{row.per_gpu_memory_gb:.1f}",
            f"{row.usable_memory_gb:.1f}",
            f"{row.tokens_per_day / 1e6:,.0f}" if row.fits else "-",
            f"{row.mfu:.0%}" if row.fits else "-",
        ]
        for row in listed
    ]
    if rows:
        title = "GPU types that fit: the smallest count, then the fastest"
        display.print_table(console, PLAN_COLUMNS, rows, wide=shown.wide, title=title)
    more = fitting[len(listed) :]
    if more:
        counts = sorted({row.gpu_count for row in more})
        span = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        display.say(console, f"{len(more)} more fit on {span} GPUs, or slower; --all lists them")
    if failing:
        most = max(row.gpu_count for row in failing)
        names = ", ".join(row.gpu_model for row in failing)
        # catalog names, safe: wrapped at the terminal's width (not a terminal: one line, for logs)
        console.print(Text(f"do not fit on {most} GPUs ({len(failing)}): {names}", style="dim"))


def _value(choice: StrEnum | None) -> str:
    return DEFAULT if choice is None else choice.value


def size(
    model: Annotated[
        str,
        typer.Argument(
            help="A preset (llama-3.1-8b, qwen2.5-72b...), a size such as 7B, "
            "or the path of a Hugging Face config.json."
        ),
    ],
    method: Annotated[
        str, typer.Option("--method", "-m", callback=training_method, metavar="<method>", help=METHOD_HELP)
    ],
    framework: Annotated[
        Framework,
        typer.Option("--framework", "-f", help="Training framework whose defaults apply (docs/sizing.md)."),
    ] = _DEFAULT_FRAMEWORK,
    seq_len: Annotated[
        int, typer.Option("--seq-len", min=1, max=MAX_SEQ_LEN, help="Tokens per sequence.")
    ] = 2048,
    batch: Annotated[
        int, typer.Option("--batch", min=1, max=MAX_COUNT, help="Micro-batch (sequences) per GPU.")
    ] = 1,
    grad_accum: Annotated[
        int, typer.Option("--grad-accum", min=1, max=MAX_COUNT, help="Micro-batches per optimizer step.")
    ] = 8,
    checkpointing: Annotated[
        Checkpointing | None,
        typer.Option("--checkpointing", help="Activation recompute (default: the framework's)."),
    ] = None,
    flash_attention: Annotated[
        bool, typer.Option("--flash-attention/--no-flash-attention", help="Flash/SDPA attention kernels.")
    ] = True,
    optimizer: Annotated[
        Optimizer | None, typer.Option("--optimizer", help="Optimizer (default: the framework's).")
    ] = None,
    paged_optimizer: Annotated[
        bool, typer.Option("--paged-optimizer", help="Optimizer states in host-paged unified memory.")
    ] = False,
    optimizer_in_backward: Annotated[
        bool,
        typer.Option("--optimizer-in-backward", help="Step each parameter in backward (needs grad-accum 1)."),
    ] = False,
    optimizer_step: Annotated[
        OptimizerStep | None,
        typer.Option("--optimizer-step", help="AdamW foreach or fused (default: the framework's)."),
    ] = None,
    loss: Annotated[
        Loss | None, typer.Option("--loss", help="Loss computation (default: the framework's).")
    ] = None,
    lora_rank: Annotated[
        int, typer.Option("--lora-rank", min=1, max=MAX_COUNT, help="LoRA rank (lora, qlora).")
    ] = 8,
    lora_targets: Annotated[
        str, typer.Option("--lora-targets", help="'all' or modules, e.g. q_proj,v_proj (lora, qlora).")
    ] = "all",
    freeze_layers: Annotated[
        int, typer.Option("--freeze-layers", min=1, max=MAX_COUNT, help="Last layers freeze-tuning trains.")
    ] = 2,
    gpu: Annotated[str | None, typer.Option("--gpu", help="Size one configuration on this GPU.")] = None,
    gpus: Annotated[
        int | None,
        typer.Option("--gpus", min=1, max=planner.MAX_GPUS, help="GPU count (default: smallest that fits)."),
    ] = None,
    zero: Annotated[
        int | None,
        typer.Option("--zero", min=0, max=3, help="ZeRO/FSDP stage (default: smallest that fits)."),
    ] = None,
    tp: Annotated[
        int | None, typer.Option("--tp", min=1, max=MAX_COUNT, help="Tensor-parallel degree (within a node).")
    ] = None,
    pp: Annotated[
        int | None, typer.Option("--pp", min=1, max=MAX_COUNT, help="Pipeline-parallel stages.")
    ] = None,
    sequence_parallel: Annotated[
        bool | None,
        typer.Option(
            "--sequence-parallel/--no-sequence-parallel",
            help="Sequence parallelism with TP (default: megatron's).",
        ),
    ] = None,
    offload: Annotated[Offload, typer.Option("--offload", help="CPU offload.")] = _NO_OFFLOAD,
    mfu: Annotated[
        float | None, typer.Option("--mfu", min=0, max=1, help="Use this MFU (0-1) instead of the prior.")
    ] = None,
    accounting: Annotated[
        Accounting | None,
        typer.Option("--accounting", help="Model-state convention (default: the framework's)."),
    ] = None,
    internode_gbps: Annotated[
        float,
        typer.Option(
            "--internode-gbps",
            min=1,
            max=MAX_INTERNODE_GBPS,
            help="Gb/s per GPU between nodes, one direction: the fabric's "
            f"(default {DEFAULT_INTERNODE_GBPS_PER_GPU:g}, NDR InfiniBand or EFA on p5; README 'Clusters').",
        ),
    ] = DEFAULT_INTERNODE_GBPS_PER_GPU,
    vs_article: Annotated[
        bool, typer.Option("--vs-article", help="Show the seed article's rule beside this estimate.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (schema in docs/sizing.md).")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column, however wide the terminal.")] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Every assumption with its source, not one line.")
    ] = False,
    show_all: Annotated[
        bool, typer.Option("--all", help=f"Every GPU type that fits (default: the first {FITTING_ROWS}).")
    ] = False,
) -> None:
    """Memory per GPU, GPU count and throughput for training MODEL with a method."""
    try:
        setup = TrainingSetup(
            framework=framework.value,
            seq_len=seq_len,
            micro_batch=batch,
            grad_accum=grad_accum,
            checkpointing=_value(checkpointing),
            flash_attention=flash_attention,
            optimizer=_value(optimizer),
            paged_optimizer=paged_optimizer,
            optimizer_in_backward=optimizer_in_backward,
            optimizer_step=_value(optimizer_step),
            loss=_value(loss),
            lora_rank=lora_rank,
            lora_targets=lora_targets,
            freeze_trainable_layers=freeze_layers,
            offload=offload.value,
            zero_stage=zero,
            tp=tp,
            pp=pp,
            sequence_parallel=sequence_parallel,
            mfu=mfu,
            state_accounting=_value(accounting),
            internode_gb_per_s=internode_gbps / 8,
        )
        gpu_note = None
        if gpu is not None:  # names as people write them: "H100", "A100-80GB", "4090", "910B"
            match = gpu_names.resolve(gpu)
            gpu, gpu_note = match.gpu_model, match.note
        sizing = planner.prepare(model_files.model(model), method, setup)
        counts = (gpus,) if gpus is not None else planner.DEFAULT_GPU_COUNTS
        plans = sizing.plan(counts)
        single = None
        if gpu is not None or gpus is not None or zero is not None or setup.fixed_layout:
            single = sizing.estimate(gpu=gpu, gpu_count=gpus)
        comparison = article.compare_sizing(sizing) if vs_article else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc

    layout = single.layout if single is not None else DATA_PARALLEL
    gpu_spec = None
    if single is not None and single.requirement is not None:
        gpu_spec = find_gpu(single.requirement.gpu_model)
    lines = assumptions.describe(sizing, layout, gpu_spec)
    if not as_json:
        console = display.console()
        if gpu_note:
            display.say(console, gpu_note, style="dim")
        _print_tables(console, sizing, single, plans, comparison, lines, Shown(wide, explain, show_all))
        return
    spec = sizing.spec
    result: dict[str, Any] = {
        "model": model,
        "model_preset": spec.preset,
        "params": spec.params,
        "active_params": spec.active_params,
        "method": method,
        "framework": setup.framework,
        "settings": _settings_json(setup),
        "model_fields_read": list(spec.fields_read),
        "assumptions": lines,
        "total_memory_gb": round(sizing.replica.total, 3),
        "breakdown_gb": _breakdown_json(sizing.replica),
    }
    if single is not None:
        result.update(_single_json(single))
    if gpu is not None:
        result["gpu_note"] = gpu_note
    result["plans"] = [_plan_json(row) for row in plans]
    if comparison is not None:
        result["article"] = _article_json(comparison)
    typer.echo(json.dumps(result, ensure_ascii=False, indent=2))


def register(app: typer.Typer) -> None:
    app.command("size")(size)
