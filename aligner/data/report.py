"""Bad-item reporting for data preparation: every bad item is named, counted, and
either skipped (when the user allows it) or turned into one clear failure."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True)
class BadItem:
    """One unusable input: ``where`` is a file (and line), ``reason`` says what is wrong."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


class BadItemsError(ValueError):
    """Bad items were found and ``--skip-bad`` was not given; nothing was written."""

    def __init__(self, report: BadItemReport) -> None:
        self.report = report
        first = report.items[0]
        more = f" and {len(report) - 1} more" if len(report) > 1 else ""
        super().__init__(
            f"{len(report)} bad item(s), first {first}{more}; nothing written: fix them or "
            "pass --skip-bad to keep the good ones"
        )


class NoItemsError(ValueError):
    """A corpus without one good item: nothing was written (an empty corpus is no
    corpus to train on). ``report``: its bad items, if any."""

    def __init__(self, corpus: str, report: BadItemReport) -> None:
        self.report = report
        why = f"all {len(report)} bad, listed above" if len(report) else "none found"
        super().__init__(f"{corpus}: no item to write: {why}; nothing written")


@dataclass
class BadItemReport:
    """The bad items met while reading a corpus, in the order they were found."""

    items: list[BadItem] = field(default_factory=list)

    def add(self, where: str, reason: str) -> None:
        self.items.append(BadItem(str(where), reason))

    def __len__(self) -> int:
        return len(self.items)

    def counts(self) -> dict[str, int]:
        """Number of bad items per reason kind (the reason up to its first ' (' or ';')."""
        kinds = (item.reason.split(" (")[0].split(";")[0].strip() for item in self.items)
        return dict(Counter(kinds))

    def check(self, skip_bad: bool) -> None:
        """Raise ``BadItemsError`` when there are bad items and skipping is not allowed."""
        if self.items and not skip_bad:
            raise BadItemsError(self)
