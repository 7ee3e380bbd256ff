"""The names the simulated model answers to on the wire: its model name and the optional hint
headers it reads.

They are the simulator's own, as a server's model and header names are the server's: the
simulator imports nothing from the workbench. The harness keeps its copy in ``psit_lib.wire``;
a test checks the two agree (a mismatch would only cost the hints, which the simulator does
not need: it reads its role and profile from the request).
"""

ROLE_HEADER = "X-PSIT-Role"
PROFILE_HEADER = "X-PSIT-Profile"
SIM_MODEL_NAME = "psit-sim"
