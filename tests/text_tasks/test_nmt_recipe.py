"""egs/tatoeba/nmt1/run.sh through all stages on a small synthetic pair file."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEXICON = {
    "the": "le",
    "a": "un",
    "cat": "chat",
    "dog": "chien",
    "fish": "poisson",
    "bird": "oiseau",
    "horse": "cheval",
    "wolf": "loup",
    "sees": "voit",
    "eats": "mange",
    "likes": "aime",
    "big": "grand",
    "small": "petit",
    "black": "noir",
    "old": "vieux",
}
NOUNS = ["cat", "dog", "fish", "bird", "horse", "wolf"]


def write_pairs(path: Path, n: int = 240, seed: int = 0) -> None:
    """English -> a French-like target (adjective after the noun), Tatoeba's 3 columns."""
    rng = random.Random(seed)
    lines: set[str] = set()
    while len(lines) < n:
        src = ["the", rng.choice(["big", "small", "black", "old"]), rng.choice(NOUNS)]
        src += [rng.choice(["sees", "eats", "likes"]), "a", rng.choice(NOUNS)]
        tgt = [LEXICON[w] for w in src]
        tgt[1], tgt[2] = tgt[2], tgt[1]
        lines.add(f"{' '.join(src).capitalize()}.\t{' '.join(tgt).capitalize()}.\tCC-BY 2.0")
    path.write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")


TRAIN_ARGS = " ".join(
    f"--set {kv}"
    for kv in [
        "train.max_steps=40",
        "train.eval_every=20",
        "train.checkpoint_every=20",
        "train.batch_size=32",
        "train.lr=1e-2",
        "train.warmup_steps=5",
        "train.progress=false",
        "model.emb_dim=32",
        "model.enc_hidden=32",
        "model.dec_hidden=64",
        "model.out_dim=64",
        "model.attn_dim=32",
        "model.dropout=0.0",
        "data.min_freq=1",
    ]
)


@pytest.mark.slow
def test_tatoeba_run_sh_all_stages(tmp_path):
    pairs = tmp_path / "pairs.txt"
    write_pairs(pairs)
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "ALIGNER": str(bin_dir / "aligner"),
        "PYTHON": sys.executable,
        "OMP_NUM_THREADS": "1",
    }
    script = ROOT / "egs/tatoeba/nmt1/run.sh"
    cmd = [str(script), str(pairs), "--beam", "3", "--train-args", TRAIN_ARGS]
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    exp = tmp_path / "exp/bigru_luong"
    hyps = (exp / "decode/test.hyp").read_text(encoding="utf-8").splitlines()
    tests = (tmp_path / "data/test.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(hyps) == len(tests) > 0
    assert (exp / "decode/first.png").read_bytes()[:4] == b"\x89PNG"
    score = (exp / "score/test.txt").read_text(encoding="utf-8")
    assert "BLEU" in score and "chrF" in score
    bleu = float(score.split("BLEU")[1].split()[0])
    # 40 updates learn this 15-word language; the translations come out as plain cased
    # text ("Le chat noir voit un chien."), scored against the untouched references
    assert bleu > 60
    assert all(h[0].isupper() and h.endswith(".") and " ." not in h for h in hyps)
    # every stage is skipped on a second run, nothing recomputed
    again = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.count("skipped") == 4, again.stdout
