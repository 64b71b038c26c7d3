"""Placeholder: implemented in its own commit."""
HELP = "(not yet implemented)"
DESCRIPTION = HELP


def configure(parser) -> None:
    pass


def run(args) -> int:
    from flipcheck.errors import UsageError

    raise UsageError("not implemented yet")
