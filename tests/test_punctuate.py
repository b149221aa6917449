"""The punctuation restorer: marks and capitals put back into passages of pages that lost them."""
import json

import pytest

from winellbot.article import parse_article
from winellbot.bench import punct_fit
from winellbot.models import Document, Update
from winellbot.pipeline.offline.punctuate import PUNCTUATED_NOTE, PunctuationModel, Punctuator, bundled_model, lost_form, \
    punctuated, word_labels
from winellbot.pipeline.restore import RESTORED_NOTE, name_pairs

ARTICLE = parse_article("Harbour Bridge", (
    "The Harbour Bridge is a road bridge in Port Town.\n\n"
    "== History ==\nConstruction of the Harbour Bridge began in 2020 under mayor Alice Brown."))

LOST = ("the harbour bridge opened to traffic on monday after four years of work the mayor alice brown said "
        "the bridge would carry twelve thousand cars a day tolls will end in 2031 according to the transport "
        "office which paid for most of the work")


def test_a_cased_word_is_stripped_and_labelled_as_a_page_that_lost_its_punctuation_has_it():
    assert [lost_form(w) for w in ("U.S.", "hole-in-one", "Brown's", "\u2014")] == ["us", "holeinone", "browns", ""]
    assert word_labels("Monday.") == (2, 1)
    assert word_labels("NATO,") == (1, 2)
    assert word_labels("why?\"") == (3, 0)
    assert word_labels("bridge") == (0, 0)


def test_the_bundled_model_ends_sentences_and_keeps_every_word():
    tokens = LOST.split()
    text = punctuated(tokens, bundled_model().marks(tokens), {})
    assert [lost_form(w) for w in text.split()] == tokens  # no word added, dropped or changed
    inner = text[:-1]
    assert inner.count(". ") >= 2  # three sentences in the source
    assert "Monday" in text and text[0].isupper() and text.endswith(".")


def test_a_long_text_is_read_in_overlapping_windows_and_every_word_gets_a_label():
    tokens = LOST.split() * 6  # 240 words: three windows of 120 with overlap
    labels = bundled_model().marks(tokens)
    assert len(labels) == len(tokens)
    assert sum(m >= 2 for m, _ in labels) >= 6  # sentence ends found in every window, not only the first


def test_names_the_article_writes_keep_its_form_and_a_sentence_starts_with_a_capital():
    tokens = "the wojcikowski bridge opened in may it cost ten million".split()
    labels = [(0, 0)] * 5 + [(2, 0)] + [(0, 0)] * 4
    casing = {"wojcikowski": "Wojcikowski", "bridge": "Bridge"}
    assert punctuated(tokens, labels, casing) == "The Wojcikowski bridge opened in may. It cost ten million."
    # An English word the article capitalises in a name keeps the capital where the model reads one.
    labels[2] = (0, 1)
    assert punctuated(tokens, labels, casing) == "The Wojcikowski Bridge opened in may. It cost ten million."
    # ... or where the article writes it next to the same word in a name.
    labels[2] = (0, 0)
    pairs = name_pairs("Crews painted the Wojcikowski Bridge. The bridge is blue.")
    assert pairs == {("wojcikowski", "bridge")}
    assert punctuated(tokens, labels, casing, pairs) == "The Wojcikowski Bridge opened in may. It cost ten million."


def test_the_refiner_punctuates_a_lost_case_passage_and_tells_the_reviewer():
    lost = Document("r1", "https://ref.example/a", "bridge", f"some other words {LOST} and more words")
    cased = Document("n1", "https://news.example/a", "Bridge", "The Harbour Bridge opened. It cost a lot.")
    updates = [Update(text=LOST, section_path=("History",), quote=LOST, document=lost, reason=f"chosen; {RESTORED_NOTE}"),
               Update(text="The Harbour Bridge opened.", section_path=("History",), quote="The Harbour Bridge opened.",
                      document=cased, reason="chosen")]
    out = Punctuator(bundled_model()).refine(ARTICLE, updates)
    assert out[1] == updates[1]
    assert out[0].quote == LOST and out[0].text != LOST
    assert "Harbour Bridge" in out[0].text and "Alice Brown" in out[0].text  # the article's casing
    assert ". " in out[0].text and out[0].reason.endswith(PUNCTUATED_NOTE)


def test_markup_in_a_lost_case_passage_is_made_inert():
    quote = "the bridge opened {{delete}} on monday [[link]] after years of work"
    doc = Document("r1", "https://ref.example/a", "bridge", quote)
    out = Punctuator(bundled_model()).refine(ARTICLE, [Update(text=quote, section_path=("History",), quote=quote,
                                                              document=doc, reason="chosen")])
    assert not any(c in out[0].text for c in "{}[]")


def test_fit_punctuation_trains_saves_and_the_saved_weights_load(tmp_path):
    task = {"format": "winell-backtest/1", "id": "wgb-1", "title": "Harbour Bridge",
            "wikitext": "The Harbour Bridge opened in 2020. It carries cars, buses and bicycles across the bay.\n\n"
                        "== History ==\nWork began in 2016. Mayor Alice Brown opened it, and tolls end in 2031.",
            "documents": [{"id": "d1", "url": "https://news.example/a", "title": "Bridge", "published": None,
                           "text": "The bridge opened on Monday. Tolls will end in 2031, the office said. " * 3}],
            "held_out": [], "document_origins": {}}
    (tmp_path / "wgb-1.json").write_text(json.dumps(task), encoding="utf-8")
    from winellbot.bench.tasks import load_task

    windows = [w for text in punct_fit.task_texts(load_task(tmp_path / "wgb-1.json")) for w in punct_fit.windows(text, 12)]
    assert windows and all(len(w[0]) == len(w[1]) == len(w[2]) for w in windows)
    losses = []
    parts = punct_fit.train(windows, epochs=3, batch=4, rate=1e-2, log=lambda line: losses.append(line))
    weights = punct_fit.save(parts, tmp_path / "p.safetensors")
    assert len(punct_fit.predict(parts, windows[:2])) == 2
    model = PunctuationModel(weights)
    assert len(model.marks("the bridge opened on monday".split())) == 5
    first, last = (float(line.rsplit("loss ", 1)[1]) for line in (losses[0], losses[-1]))
    assert last < first


def test_weights_for_another_encoder_are_refused(tmp_path):
    from safetensors.torch import save_file
    import torch

    bad = tmp_path / "bad.safetensors"
    state = {f"heads.{k}": torch.zeros(s) for k, s in (("mark.weight", (4, 384)), ("mark.bias", (4,)),
                                                     ("case.weight", (3, 384)), ("case.bias", (3,)))}
    state["encoder.no.such.layer.weight"] = torch.zeros(2)
    save_file(state, str(bad))
    with pytest.raises(ValueError, match="weights the encoder does not have"):
        PunctuationModel(bad)
