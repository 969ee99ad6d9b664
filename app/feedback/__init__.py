"""Learning from use: what users choose and flag (:mod:`~app.feedback.events`), the curator's
review of it (:mod:`~app.feedback.review`), and what was approved served at once
(:mod:`~app.feedback.overlay`) and built into the next bundle (``indexer.knowledge.learned``)."""
