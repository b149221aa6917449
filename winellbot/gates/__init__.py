"""Quality gates run on every suggestion before it may be posted (see :mod:`winellbot.gates.base`).

The standard chain is built by :func:`winellbot.gates.registry.default_gates`; this package root imports
only the base, so a gate module or a helper such as :mod:`winellbot.gates.textnorm` loads alone.
"""
from winellbot.gates.base import Gate, GateChain, stopped, summary, summary_table

__all__ = ["Gate", "GateChain", "stopped", "summary", "summary_table"]
