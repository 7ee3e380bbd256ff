"""The theorem of SPEC §0 without any model: compatible sets, idealised hosts, exact fork odds.

- :mod:`~psit_lib.studies.psit.theory.candidate_sets`: the compatible set C_t of a public Hangman history
  and how it shrinks over seeded games.
- :mod:`~psit_lib.studies.psit.theory.policies`: a re-imagining (stochastic) POCA, a first-compatible
  (deterministic) POCA and a host with private state.
- :mod:`~psit_lib.studies.psit.theory.fork_exact`: their fork-test outcome distributions, exactly and by
  seeded simulation, plus tables for the notebook's figures.
- :mod:`~psit_lib.studies.psit.theory.secrecy`: exact public-history distributions and H(secret | history).
"""
