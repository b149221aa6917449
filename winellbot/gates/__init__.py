"""Quality gates run on every suggestion before it may be posted (see :mod:`winellbot.gates.base`)."""
from winellbot.gates.base import Gate, GateChain, default_gates, stopped, summary, summary_table

__all__ = ["Gate", "GateChain", "default_gates", "stopped", "summary", "summary_table"]
