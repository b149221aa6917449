"""Figures as PNG files, drawn with matplotlib (the optional ``report`` extra) on its file backend."""
from __future__ import annotations

from pathlib import Path


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed), or None without matplotlib."""
    try:
        import matplotlib  # lazy: an optional extra, and slow to import
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: as above

    return plt


def save(fig, path: str | Path) -> Path:
    """Lay out ``fig``, write it to ``path`` (its folder made), release it, and return the path."""
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    return path
