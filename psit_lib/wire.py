"""What the harness and the simulated model agree on, beyond the OpenAI wire format itself.

Only names live here. The simulator (``psit_lib.sim``) imports nothing from the workbench, not
even this module: it has its own copy of these names (``psit_lib.sim.wire_names``, checked equal
by a test), so anything it knows about a task it must read from the request, as a real model
would. The headers are optional hints (real servers ignore them); the simulator works
without them.
"""

ROLE_HEADER = "X-PSIT-Role"
"""Optional hint naming the harness's role for a call (e.g. ``hangman_host``)."""

PROFILE_HEADER = "X-PSIT-Profile"
"""Optional simulator profile; the model name ``psit-sim:<profile>`` says the same thing."""

SIM_MODEL_NAME = "psit-sim"
"""The simulated model's name; ``psit-sim:<profile>`` selects one of its profiles."""
