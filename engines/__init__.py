"""Pure rules engines, one package per game. No I/O: callers supply cards, dice and choices."""
