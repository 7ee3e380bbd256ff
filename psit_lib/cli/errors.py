"""The command line's one error type: a sentence for the user, no traceback."""


class CliError(RuntimeError):
    """A user-facing error: printed as one line, exit status 2."""
