"""What a training run prints: a progress bar on a terminal (plain periodic lines
elsewhere: a cluster log, ``make demo > log``), and one line per validation.

With a time budget (``train.max_minutes``) the bar's total and ETA follow whichever limit
comes first: the steps that fit in the minutes left at the current speed, or
``train.max_steps``.
"""

from __future__ import annotations

import sys
import time
from typing import IO

from tqdm.auto import tqdm

from aligner.config import TrainConfig

PLAIN_EVERY_S = 30.0  # seconds between two plain progress lines off a terminal


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


# left out of the one-line summary (TensorBoard has them all)
QUIET = {
    "entropy",
    "repeated",
    "longest_hold",
    "items_with_repeats",
    "truth_unmatched",
    "word_bias_ms",
    "phone_bias_ms",
}
INFER_SHOWN = ("infer/stopped", "infer/focus_rate", "infer/skipped")


def format_metrics(metrics: dict[str, float]) -> str:
    """``loss 0.512, focus_rate 0.81, ...`` (4 significant digits): the loss first, then
    the task's metrics (alignment, truth errors) and the free-running ones; the details
    (entropy, repeats, biases) are left to TensorBoard."""
    keys = [k for k in metrics if "/" not in k and k not in QUIET]
    keys = sorted(keys, key=lambda k: k != "loss") + [k for k in INFER_SHOWN if k in metrics]
    return ", ".join(f"{k} {metrics[k]:.4g}" for k in keys)


class Progress:
    """The bar (or plain lines) of one `Trainer.fit`; does nothing when not `enabled`."""

    def __init__(
        self,
        cfg: TrainConfig,
        initial: int,
        enabled: bool,
        start: float | None = None,
        stream: IO[str] | None = None,
        plain_every: float = PLAIN_EVERY_S,
    ) -> None:
        self.cfg, self.initial, self.step, self.enabled = cfg, initial, initial, enabled
        self.start = time.monotonic() if start is None else start
        self.stream = stream or sys.stderr
        self.plain_every, self.last_plain = plain_every, self.start
        self.loss: float | None = None
        tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = None
        if enabled and tty:
            self.bar = tqdm(
                total=cfg.max_steps,
                initial=initial,
                file=self.stream,
                dynamic_ncols=True,
                desc="train",
            )

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def total(self) -> tuple[int, bool]:
        """(the step the run will stop at as far as one can tell now, whether the time
        budget decides it)."""
        cfg, done, elapsed = self.cfg, self.step - self.initial, self.elapsed()
        if cfg.max_minutes is None or done < 1 or elapsed <= 0:
            return cfg.max_steps, False
        left = max(60 * cfg.max_minutes - elapsed, 0.0)
        by_time = self.step + int(done / elapsed * left)
        return (by_time, True) if by_time < cfg.max_steps else (cfg.max_steps, False)

    def update(self, step: int, loss: float | None = None) -> None:
        self.step, self.loss = step, loss if loss is not None else self.loss
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.total = self.total()[0]
            if loss is not None:
                self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self.bar.update(step - self.bar.n)
        elif time.monotonic() - self.last_plain >= self.plain_every:
            self.last_plain = time.monotonic()
            self.write(self.plain_line())

    def plain_line(self) -> str:
        total, by_time = self.total()
        elapsed, done = self.elapsed(), self.step - self.initial
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (total - self.step) / rate if rate > 0 else 0.0
        budget = f" (time budget {self.cfg.max_minutes:g} min)" if by_time else ""
        loss = f", loss {self.loss:.4f}" if self.loss is not None else ""
        return (
            f"train step {self.step}/{total}{budget}, {elapsed / 60:.1f} min, "
            f"{rate:.2f} steps/s{loss}, ETA {_clock(eta)}"
        )

    def validation(self, step: int, metrics: dict[str, float]) -> None:
        """One plain line: step, minutes, losses, alignment metrics, truth errors."""
        if self.enabled:
            minutes = self.elapsed() / 60
            self.write(f"valid step {step} ({minutes:.1f} min): {format_metrics(metrics)}")

    def write(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
