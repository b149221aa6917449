"""Loading a local causal language model: a model folder, a GGUF file, the bundled SmolLM2, or a
LoRA adapter folder on top of one of those (merged into the base for inference).

A model is named by a *spec*: ``"smollm2"`` (the bundled SmolLM2-135M-Instruct GGUF, see
:mod:`winellbot.bundled`), a path to a ``.gguf`` file (unpacked once into a model folder under
:data:`UNPACKED`; needs the ``gguf`` package), a model folder (``config.json``), or an adapter folder (``adapter_config.json``
plus :data:`EDITOR_FILE`, which names the base spec). Nothing is ever downloaded.
torch, transformers and peft are imported inside the functions.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from winellbot.bundled import smollm2_gguf
from winellbot.errors import ConfigError, ModelError

BUNDLED = "smollm2"
EDITOR_FILE = "editor.json"  # beside an adapter: its base spec, prompt and answer format
COPIED = "copied-span-1"  # the answer format of an editor that copies its sentence (llm.copying)
# Where a GGUF base is unpacked once into an ordinary model folder (see unpacked_gguf).
UNPACKED = Path(os.environ.get("WINELLBOT_MODELS", Path.home() / ".cache" / "winellbot" / "models"))


def cpu_threads(*, cores: int | None = None, load: float | None = None, own: float = 0.0) -> int:
    """How many threads torch should use on the CPU now: the cores that other processes leave free.

    torch's OpenMP workers meet at the end of every operation, and a decoder runs about a thousand
    small operations per token; when another process holds one of the cores, every operation waits
    for the descheduled worker. Measured on this project's 2-core machine at load 3.5: SmolLM2 decodes
    1 token/s with 2 threads and 12 tokens/s with 1. ``load`` is the 1-minute load average, ``own``
    this process's share of it (its recent CPU use, in cores), so a busy editor does not count itself.
    ``WINELLBOT_THREADS`` in the environment overrides the choice.
    """
    if os.environ.get("WINELLBOT_THREADS", "").isdigit():
        return max(1, int(os.environ["WINELLBOT_THREADS"]))
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if load is None:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    others = max(0.0, load - own)
    return max(1, min(cores, int(cores - others + 0.5)))


class ThreadChooser:
    """:func:`cpu_threads`, asked again before each job, with this process's own recent CPU use discounted."""

    def __init__(self) -> None:
        self._mark: tuple[float, float] | None = None

    def __call__(self) -> int:
        wall, cpu = time.monotonic(), time.process_time()
        own = 0.0
        if self._mark and wall - self._mark[0] > 0.5:
            own = (cpu - self._mark[1]) / (wall - self._mark[0])
        self._mark = (wall, cpu)
        return cpu_threads(own=own)

    def apply(self) -> int:
        """Set torch's CPU threads to the current choice; returns it."""
        import torch

        threads = self()
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        return threads


def fast_device() -> str:
    """"cuda" where PyTorch sees a GPU, else "cpu": the in-process editor runs where training ran."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


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


SPANS_FILE = "spans.json"


def copies(spec: str | Path) -> bool:
    """Whether the editor at ``spec`` was trained to copy its sentence from the source."""
    path = Path(spec)
    if not (path / EDITOR_FILE).is_file():
        return False
    return adapter_info(path).get("answer") == COPIED


def _base_location(spec: str | Path) -> str:
    """The model folder of a base spec (a GGUF file's unpacked folder)."""
    if str(spec) == BUNDLED:
        spec = smollm2_gguf()
    path = Path(spec)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise ConfigError(f"no GGUF file at {path}")
        return str(unpacked_gguf(path))
    if not (path / "config.json").is_file():
        raise ConfigError(f"no model at {path} (config.json missing; expected {BUNDLED!r}, a .gguf file, "
                          "a model folder or an adapter folder)")
    return str(path)


def unpacked_gguf(path: Path) -> Path:
    """An ordinary model folder (float32 safetensors, tokenizer files) made once from a GGUF file.

    transformers rebuilds the config, the tokenizer and the weights from a GGUF file by parsing it
    in Python, three times per load (50 s for SmolLM2 here, 2 s from the folder); left packed, it
    would also dequantise the blocks again in every matmul, and peft can neither train nor merge
    them. The folder is named by the file's content hash and written atomically, so a changed file
    gets a new folder and two processes unpacking at once do not mix their files.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    folder = UNPACKED / f"{path.stem}-{digest.hexdigest()[:16]}"
    if (folder / "config.json").is_file():
        return folder
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    kwargs = {"local_files_only": True, "gguf_file": path.name}
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), **kwargs)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), **kwargs,
                                                     quantization_config=GgufConfig(dequantize=True))
    except (OSError, ValueError, ImportError) as exc:
        raise ModelError(f"cannot load the model {path}: {exc}") from exc
    _unmark_quantised(model)
    UNPACKED.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=UNPACKED, prefix=".unpacking-"))
    try:
        model.save_pretrained(str(work))
        tokenizer.save_pretrained(str(work))
        work.chmod(0o755)  # mkdtemp makes it private; the unpacked model is as public as its file
        try:
            work.rename(folder)
        except OSError:  # another process finished first: its folder is as good
            if not (folder / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


def _unmark_quantised(model) -> None:
    """A dequantised GGUF model is ordinary weights; transformers still marks it as quantised,
    which would stop it from being saved plainly, peft from merging and the trainer from training."""
    for name in ("hf_quantizer", "quantization_method"):
        if getattr(model, name, None) is not None:
            setattr(model, name, None)
    model.is_quantized = False
    if getattr(model.config, "quantization_config", None) is not None:
        del model.config.quantization_config


def _base_spec(spec: str | Path) -> str | Path:
    """The base model of a spec: itself, or an adapter's base (a relative one taken from the adapter folder)."""
    if not is_adapter(spec):
        return spec
    base = adapter_info(spec)["base"]
    if not Path(str(base)).is_absolute() and str(base) != BUNDLED:
        return Path(spec) / base
    return base


def load_tokenizer(spec: str | Path):
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(_base_location(_base_spec(spec)), local_files_only=True)
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
    base = _base_spec(spec)
    kwargs = {"local_files_only": True}
    if dtype:
        kwargs["dtype"] = getattr(torch, dtype)
    try:
        model = AutoModelForCausalLM.from_pretrained(_base_location(base), **kwargs)
    except (OSError, ValueError, ImportError) as exc:
        raise ModelError(f"cannot load the model {base}: {exc}") from exc
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(adapter), is_trainable=trainable)
        if merge:
            model = model.merge_and_unload()
    return model
