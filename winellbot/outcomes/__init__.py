"""What becomes of each posted suggestion, and what the bot learns from it.

* :mod:`winellbot.outcomes.adoption`: whether a posted fact entered its article (and how);
* :mod:`winellbot.outcomes.verdicts`: reviewers' statuses on the boxes, their reasons, whom to trust;
* :mod:`winellbot.outcomes.tracker`: the cycle's outcome check (adoption, revert, expiry);
* :mod:`winellbot.outcomes.report`: the outcome table, its plot and its wiki page;
* :mod:`winellbot.outcomes.cli`: ``winellbot outcomes``;
* :mod:`winellbot.outcomes.learning`: the outcomes as examples for the acceptability score and the editor.
"""

# How the outcome table may be grouped (``winellbot outcomes --by``).
GROUPINGS = ("section", "source", "gate", "month")
