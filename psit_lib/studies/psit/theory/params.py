"""Parameters of notebook 01: defined in :mod:`psit_lib.studies.psit.theorem_params`, outside this
package, so the command line loads them without the theory's computation (re-exported here)."""

from psit_lib.studies.psit.theorem_params import TheoremParams as TheoremParams
