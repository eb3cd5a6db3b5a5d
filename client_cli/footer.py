"""The footer: the keys that work now, as many as the terminal's width holds.

Textual's footer lists every active key and lets the terminal cut the line: at 60
columns ``? help`` went first. This one keeps the keys in their order but, when they do
not all fit, leaves out those that matter least (``KeyFooter.keep`` ranks the actions
the screen would lose last; ``help`` always stays), and it is compact in a narrow
terminal, without the command palette's key (ctrl+p still opens it; the help says so).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

#: From this width on, the footer has room between its keys and shows ctrl+p.
ROOMY_COLUMNS: Final = 100
#: What stays in the footer longest: help first.
ALWAYS: Final = "help"


def key_width(key_display: str, description: str, *, compact: bool) -> int:
    """The columns a footer key takes (as ``FooterKey`` draws it, with its margin)."""
    return len(key_display) + len(description) + (2 if compact else 3)


def fitting(widths: Sequence[int], ranks: Sequence[int], room: int) -> list[bool]:
    """Which keys to show: all if they fit ``room``; otherwise drop the worst ranked
    (highest rank, later first) until they do."""
    shown = [True] * len(widths)
    order = sorted(range(len(widths)), key=lambda index: (ranks[index], index), reverse=True)
    for index in order:
        if sum(width for width, keep in zip(widths, shown, strict=True) if keep) <= room:
            break
        if ranks[index] > 0:
            shown[index] = False
    return shown


class KeyFooter(Footer):
    """A footer that keeps ``? help`` and the keys that matter most when short of room."""

    def __init__(self, keep: Sequence[str] = ()) -> None:
        """``keep``: actions, the one to lose last first (after help)."""
        super().__init__()
        self.keep = (ALWAYS, *keep)

    def rank(self, action: str) -> int:
        name = action.split("(")[0].removeprefix("app.").removeprefix("screen.")
        return self.keep.index(name) if name in self.keep else len(self.keep)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        width = self.app.size.width
        compact = width < ROOMY_COLUMNS
        self.compact = compact
        self.show_command_palette = not compact
        seen: set[str] = set()
        bindings: list[tuple[Binding, bool, str]] = []
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
            if binding.show and binding.action not in seen:
                seen.add(binding.action)
                bindings.append((binding, enabled, tooltip))
        shown = fitting(
            [key_width(self.app.get_key_display(binding), binding.description, compact=compact)
             for binding, _, _ in bindings],
            [self.rank(binding.action) for binding, _, _ in bindings],
            width - (0 if compact else 16))  # the palette's key, docked right
        for (binding, enabled, tooltip), keep in zip(bindings, shown, strict=True):
            if keep:
                yield FooterKey(binding.key, self.app.get_key_display(binding),
                                binding.description, binding.action, disabled=not enabled,
                                tooltip=tooltip).data_bind(compact=Footer.compact)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            palette = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
            if palette is not None:
                _, binding, enabled, tooltip = palette
                yield FooterKey(binding.key, self.app.get_key_display(binding),
                                binding.description, binding.action,
                                classes="-command-palette", disabled=not enabled,
                                tooltip=binding.tooltip or binding.description)

    def on_resize(self, _: events.Resize) -> None:
        self.call_after_refresh(self.recompose)
