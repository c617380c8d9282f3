"""Using trained models: what the command line, the scripts and your own Python call.

Speech (`aligner.inference.speech`, `.synthesis`, `.align`)::

    from aligner.inference import load_speech_model, synthesize_text
    tts = load_speech_model("exp/tts/checkpoints/best.pt", "tts")
    wave, utterances, sentences = synthesize_text(tts, "Hello there. How are you?")

Text (`aligner.inference.text`, `.text_io`)::

    from aligner.inference import load_text_model
    g2p = load_text_model(["exp/g2p/avg.pt"], "g2p")   # several paths: an ensemble
    g2p.convert(["aligner"], beam=5)
"""

from aligner.inference.align import align_manifest
from aligner.inference.common import InferenceError
from aligner.inference.conversion import convert
from aligner.inference.speech import Generated, SpeechModel, load_speech_model
from aligner.inference.synthesis import Decoding, synthesize, synthesize_text
from aligner.inference.text import TextModel, load_reverse_model, load_text_model
from aligner.inference.text_io import Search, decode_inputs

__all__ = [
    "Decoding",
    "Generated",
    "InferenceError",
    "Search",
    "SpeechModel",
    "TextModel",
    "align_manifest",
    "convert",
    "decode_inputs",
    "load_reverse_model",
    "load_speech_model",
    "load_text_model",
    "synthesize",
    "synthesize_text",
]
