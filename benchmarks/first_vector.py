"""One fresh process's way to its first sentence vector (all-MiniLM-L6-v2): the bot's own encoder
(``winellbot.meaning.Embedder``, plain transformers) or sentence-transformers' (``st``, the dev extra).
Timed from outside, in pairs:

    farm-bench -n 8 --timeout 300 --vs ".venv/bin/python benchmarks/first_vector.py st" -- \
        .venv/bin/python benchmarks/first_vector.py
"""
import sys

from winellbot import bundled

if sys.argv[1:] == ["st"]:
    from sentence_transformers import SentenceTransformer

    SentenceTransformer(str(bundled.minilm_dir()), device="cpu", local_files_only=True).encode(["A bridge opened."])
else:
    from winellbot.meaning import Embedder

    Embedder().embed(["A bridge opened."])
