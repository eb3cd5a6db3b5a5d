"""``gaps``: the terminal client of Gaps Arena."""
