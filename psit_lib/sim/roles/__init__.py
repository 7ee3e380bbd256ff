"""Simulated roles; importing this package registers them all."""

from . import candidates  # noqa: F401
from . import hangman  # noqa: F401
from . import updater  # noqa: F401
from . import basis  # noqa: F401
from . import diagnosis  # noqa: F401
from . import memory_libraries  # noqa: F401
from . import acc  # noqa: F401
