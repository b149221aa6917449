"""Reviewed before posted: the review page (a Flask app) where editors triage the bot's suggestions.

It imports the state (:mod:`winellbot.state.reviews`) and the post's rendering
(:mod:`winellbot.wiki.render`), never the pipeline. It records decisions in the state; the bot's
writer posts what was approved. Started by ``winellbot review serve [--port N]`` here, and on
Toolforge as a webservice (``scripts/toolforge/review/``; docs/review.md).
"""
