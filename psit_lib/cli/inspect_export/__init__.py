"""``psit export RUN --inspect``: a run's episodes as Inspect eval logs that Inspect's own viewer
(``inspect view``) reads as they happened: each fork a fork, each agent its own lane."""
