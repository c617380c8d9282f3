"""Point phonemizer (and any ctypes user) at the eSpeak NG shipped in ``espeakng-loader``.

No system eSpeak package is needed: the wheel carries ``libespeak-ng.so`` and its
voice data. Call :func:`ensure_espeak` once before using phonemizer's espeak backend
or the library directly; it is cheap to call again.
"""

from __future__ import annotations

import os
from functools import lru_cache

DATA_ENV = "ESPEAK_DATA_PATH"


@lru_cache(maxsize=1)
def ensure_espeak() -> tuple[str, str]:
    """Register the wheel's eSpeak NG with phonemizer; returns ``(library_path, data_path)``.

    Sets ``ESPEAK_DATA_PATH`` to the wheel's voice data unless the user has set it.
    Raises RuntimeError naming the missing package when ``espeakng-loader`` or
    ``phonemizer`` is not installed.
    """
    try:
        import espeakng_loader
    except ImportError as err:  # pragma: no cover - a dependency of the package
        raise RuntimeError(
            "espeakng-loader is not installed; run `pip install espeakng-loader`"
        ) from err
    library = espeakng_loader.get_library_path()
    data = espeakng_loader.get_data_path()
    os.environ.setdefault(DATA_ENV, data)
    try:
        from phonemizer.backend.espeak.wrapper import EspeakWrapper
    except ImportError:  # phonemizer is optional for users of the library alone
        return library, data
    EspeakWrapper.set_library(library)
    if hasattr(EspeakWrapper, "set_data_path"):
        EspeakWrapper.set_data_path(data)
    return library, data
