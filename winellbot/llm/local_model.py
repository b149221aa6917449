"""Loading a local causal language model: a model folder, a GGUF file, the bundled SmolLM2, or a
LoRA adapter folder on top of one of those (merged into the base for inference).

A model is named by a *spec*: ``"smollm2"`` (the bundled SmolLM2-135M-Instruct GGUF, see
:mod:`winellbot.bundled`), a path to a ``.gguf`` file (transformers dequantises it; needs the
``gguf`` package), a model folder (``config.json``), or an adapter folder (``adapter_config.json``
plus :data:`EDITOR_FILE`, which names the base spec). Nothing is ever downloaded.
torch, transformers and peft are imported inside the functions.
"""
from __future__ import annotations

import json
from pathlib import Path

from winellbot.errors import ConfigError, ModelError

BUNDLED = "smollm2"
EDITOR_FILE = "editor.json"  # beside an adapter: its base spec, prompt and answer format


def fast_dtype() -> str | None:
    """"bfloat16" where the hardware computes it natively (a recent GPU, a CPU with AMX or AVX-512
    BF16: about 5x faster than float32 on this project's CPUs), else None (float32)."""
    import torch

    if torch.cuda.is_available():
        return "bfloat16" if torch.cuda.is_bf16_supported() else None
    cpu = getattr(torch, "cpu", None)
    for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported"):
        if cpu is not None and getattr(cpu, probe, lambda: False)():
            return "bfloat16"
    return None


def is_adapter(path: str | Path) -> bool:
    return (Path(path) / "adapter_config.json").is_file()


def adapter_info(path: str | Path) -> dict:
    """The :data:`EDITOR_FILE` of an adapter folder (``{"base": spec, ...}``)."""
    file = Path(path) / EDITOR_FILE
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} is a LoRA adapter without {EDITOR_FILE} (which names its base model)") from None
    except ValueError as exc:
        raise ConfigError(f"{file}: not JSON: {exc}") from exc


def _base_location(spec: str | Path) -> tuple[str, dict]:
    """(folder, extra from_pretrained kwargs) for a base spec."""
    if str(spec) == BUNDLED:
        from winellbot.bundled import smollm2_gguf

        spec = smollm2_gguf()
    path = Path(spec)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ConfigError(f"no GGUF file at {path}")
        return str(path.parent), {"gguf_file": path.name}
    if not (path / "config.json").is_file():
        raise ConfigError(f"no model at {path} (config.json missing; expected {BUNDLED!r}, a .gguf file, "
                          "a model folder or an adapter folder)")
    return str(path), {}


def load_tokenizer(spec: str | Path):
    from transformers import AutoTokenizer

    folder, extra = _base_location(adapter_info(spec)["base"] if is_adapter(spec) else spec)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load the tokenizer of {spec}: {exc}") from exc
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(spec: str | Path, *, dtype: str | None = None, merge: bool = True, trainable: bool = False):
    """The model named by ``spec``; an adapter is loaded on its base (merged unless ``merge=False``)."""
    import torch
    from transformers import AutoModelForCausalLM

    adapter = Path(spec) if is_adapter(spec) else None
    base = adapter_info(adapter)["base"] if adapter else spec
    if adapter and not Path(str(base)).is_absolute() and str(base) != BUNDLED:
        base = adapter / base  # a base given relative to the adapter folder
    folder, extra = _base_location(base)
    kwargs = {"local_files_only": True, **extra}
    if "gguf_file" in extra:
        # Unpacked once into ordinary dense weights: left packed, transformers dequantises the
        # blocks again in every matmul (about 5x slower here), and peft cannot train or merge them.
        from transformers import GgufConfig

        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    if dtype:
        kwargs["dtype"] = getattr(torch, dtype)
    try:
        model = AutoModelForCausalLM.from_pretrained(folder, **kwargs)
    except (OSError, ValueError, ImportError) as exc:
        raise ModelError(f"cannot load the model {base}: {exc}") from exc
    # A GGUF base is dequantised to ordinary weights; transformers still marks it as quantised,
    # which would stop peft from merging and the trainer from training it.
    for name in ("hf_quantizer", "quantization_method"):
        if getattr(model, name, None) is not None:
            setattr(model, name, None)
    model.is_quantized = False
    if dtype:  # a GGUF base is dequantised to float32 whatever dtype was asked for
        model = model.to(getattr(torch, dtype))
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable)
        if merge:
            model = model.merge_and_unload()
    return model
