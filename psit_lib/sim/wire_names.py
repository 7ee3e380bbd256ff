"""The names the simulated model answers to on the wire: its model name and the optional hint headers.
The harness keeps its own copy in ``psit_lib.wire`` (the simulator imports nothing); a test checks they agree."""

ROLE_HEADER = "X-PSIT-Role"
PROFILE_HEADER = "X-PSIT-Profile"
SIM_MODEL_NAME = "psit-sim"
