"""The alignment of one validation item over training, from TensorBoard events to GIF/PNG.

The trainer logs the same fixed validation items at every validation, so the images of
one tag, ordered by step, show the attention curve forming. `read_images` reads them back
with TensorBoard's `EventAccumulator`; `write_evolution` stitches them into an animated
GIF and a PNG strip, each frame labelled with its step.
"""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont


class EvolutionError(ValueError):
    """No event files, or no images of the requested tag."""


def _accumulator(log_dir: Path):
    from tensorboard.backend.event_processing.event_accumulator import (
        IMAGES,
        EventAccumulator,
    )

    if not log_dir.is_dir() or not any(log_dir.glob("events.out.tfevents.*")):
        raise EvolutionError(
            f"no TensorBoard event files in {log_dir}; train with `aligner train ... --out EXP` first"
        )
    acc = EventAccumulator(str(log_dir), size_guidance={IMAGES: 0})
    acc.Reload()
    return acc


def image_tags(log_dir: str | Path) -> list[str]:
    """The image tags logged in `log_dir`, sorted."""
    return sorted(_accumulator(Path(log_dir)).Tags()["images"])


def read_images(log_dir: str | Path, tag: str) -> list[tuple[int, Image.Image]]:
    """The images of `tag` as (step, RGB image), by step; of a step logged twice (a resumed
    run replaying steps after its checkpoint), the later one."""
    acc = _accumulator(Path(log_dir))
    tags = sorted(acc.Tags()["images"])
    if tag not in tags:
        listed = ", ".join(tags) if tags else "none"
        raise EvolutionError(f"no images of tag {tag!r} in {log_dir}; logged image tags: {listed}")
    by_step = {
        ev.step: Image.open(io.BytesIO(ev.encoded_image_string)).convert("RGB")
        for ev in acc.Images(tag)
    }
    return sorted(by_step.items())


def label_frame(image: Image.Image, text: str, band: int = 26) -> Image.Image:
    """`image` with a white band on top holding `text`."""
    out = Image.new("RGB", (image.width, image.height + band), "white")
    out.paste(image, (0, band))
    draw = ImageDraw.Draw(out)
    draw.text((4, 3), text, fill="black", font=ImageFont.load_default(size=18))
    return out


def pick_evenly(n: int, k: int) -> list[int]:
    """`min(n, k)` indices spread evenly over range(n), always including the first and last."""
    if n <= k:
        return list(range(n))
    if k == 1:
        return [n - 1]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def write_evolution(
    frames: list[tuple[int, Image.Image]],
    gif_path: str | Path,
    png_path: str | Path,
    frame_ms: int = 400,
    strip_frames: int = 8,
) -> None:
    """An animated GIF of every frame and a PNG strip of up to `strip_frames` of them."""
    if not frames:
        raise EvolutionError("no frames to write")
    size = frames[0][1].size
    labelled = [label_frame(img.resize(size), f"step {step}") for step, img in frames]
    first, *rest = labelled
    first.save(
        gif_path, save_all=True, append_images=rest, duration=frame_ms, loop=0, optimize=False
    )
    chosen = [labelled[i] for i in pick_evenly(len(labelled), strip_frames)]
    gap = 4
    strip = Image.new(
        "RGB", (sum(im.width for im in chosen) + gap * (len(chosen) - 1), first.height), "white"
    )
    x = 0
    for im in chosen:
        strip.paste(im, (x, 0))
        x += im.width + gap
    strip.save(png_path)


def evolution_of(
    exp: Path,
    tag: str | None = None,
    out: Path | None = None,
    frame_ms: int = 400,
    strip_frames: int = 8,
    force: bool = False,
) -> tuple[str, list[int], Path, Path]:
    """The logged images `tag` of the experiment `exp` (default: the first alignment tag)
    stitched into the GIF `out` (default ``EXP/evolution.gif``) and a PNG strip beside it;
    returns ``(tag, steps, gif, png)``. Existing outputs are replaced only with `force`."""
    log_dir = exp / "tb" if (exp / "tb").is_dir() else exp
    gif = out or exp / "evolution.gif"
    png = gif.with_suffix(".png")
    if tag is None:
        tags = image_tags(log_dir)
        aligned = [t for t in tags if "align" in t.lower()]
        if not aligned:
            raise EvolutionError(
                f"no alignment images in {log_dir}; logged image tags: {', '.join(tags) or 'none'}"
            )
        tag = aligned[0]
    frames = read_images(log_dir, tag)
    for path in (gif, png):
        if path.exists() and not force:
            raise EvolutionError(f"{path} exists; pass --force to overwrite it")
    gif.parent.mkdir(parents=True, exist_ok=True)
    write_evolution(frames, gif, png, frame_ms=frame_ms, strip_frames=strip_frames)
    return tag, [s for s, _ in frames], gif, png
