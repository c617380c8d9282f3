"""Using trained models: what the command line, the scripts and your own Python call.

Any checkpoint, or an experiment folder (its best.pt, else its latest checkpoint), loads
as its family's class (`aligner.inference.loading`)::

    from aligner.inference import load_model, synthesize_text
    tts = load_model("exp/tts")                    # a TTSModel (VCModel, AlignModel, TextModel)
    wave, utterances, sentences = synthesize_text(tts, "Hello there. How are you?")

One recording aligned with its text (any model whose family aligns)::

    from aligner.inference import align, load_speech_model
    model = load_speech_model("exp/aligner", "align")
    alignment = align(model, "hello.wav", "Hello there.")
    alignment.words                                # [Interval(start, end, "hello"), ...]

Text (`aligner.inference.text`, `.text_io`)::

    from aligner.inference import load_text_model
    g2p = load_text_model(["exp/g2p/avg.pt"], "g2p")   # several paths: an ensemble
    g2p.convert(["aligner"], beam=5)
"""

from aligner.inference.align import align, align_manifest
from aligner.inference.common import InferenceError
from aligner.inference.conversion import convert
from aligner.inference.forward_sum import AlignModel
from aligner.inference.loading import load_model, load_speech_model
from aligner.inference.speech import Generated, SpeechModel
from aligner.inference.synthesis import Decoding, synthesize, synthesize_text
from aligner.inference.tacotron import TTSModel, VCModel
from aligner.inference.text import TextModel, load_reverse_model, load_text_model
from aligner.inference.text_io import Search, decode_inputs

__all__ = [
    "AlignModel",
    "Decoding",
    "Generated",
    "InferenceError",
    "Search",
    "SpeechModel",
    "TTSModel",
    "TextModel",
    "VCModel",
    "align",
    "align_manifest",
    "convert",
    "decode_inputs",
    "load_model",
    "load_reverse_model",
    "load_speech_model",
    "load_text_model",
    "synthesize",
    "synthesize_text",
]
