"""``winellbot fit placement``'s fitting: the softmax over sections, and the terms each weight set may use."""
import numpy as np

from winellbot.bench import fit
from winellbot.pipeline.placement import TERMS


def rows_where(term: str, n: int = 30, sections: int = 4, seed: int = 0):
    """Placements whose right section is the one with the largest ``term``; the other terms are noise."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = rng.random((sections, len(TERMS)))
        y = np.zeros(sections)
        y[int(np.argmax(x[:, TERMS.index(term)]))] = 1.0
        out.append((f"task-{i % 6}", "passage", x, y))
    return out


def test_the_fit_finds_the_term_that_places():
    rows = rows_where("heading")
    w = fit.fit_softmax(rows)
    others = np.delete(w, TERMS.index("heading"))
    assert w[TERMS.index("heading")] > 3 * np.abs(others).max()
    assert fit.accuracy(rows, w) >= 0.9  # the L2 pull towards 0 costs a near tie or two


def test_a_passage_in_its_source_is_fitted_without_its_embedding():
    # The meaning term alone places these: a fit that could use it would weigh it most.
    rows = rows_where("meaning")
    assert "meaning" not in fit.FITTED_TERMS["in_source"]
    w = fit.fit_softmax(fit.only(rows, fit.FITTED_TERMS["in_source"]))
    assert w[TERMS.index("meaning")] == 0.0
    assert fit.fit_softmax(fit.only(rows, fit.FITTED_TERMS["alone"]))[TERMS.index("meaning")] > 1.0
    # ``only`` leaves the rows it was given alone
    assert all(x[:, TERMS.index("meaning")].any() for _, _, x, _ in rows)
