"""Expose a card reader's features and heads, so the scanner can adapt it to a table's decks.

The index and whole-card readers end in two linear heads (rank, suit) over one 128-wide
feature vector, combined into the 55 classes' log-probabilities (`train.factor_labels`). The
scanner's deck adaptation (`scanner/deck_adapt.py`) refits those two heads on the game's own
sure reads, so it needs, at run time and without onnx or torch:
- the features: `expose` adds them to the graph as a second output, `features` (the logits
  are computed as before, node for node);
- the heads: written beside the model as `<model>.heads.npz` (rank and suit weights and
  biases, and the two 0/1 matrices that spread them over the 55 classes).

`train.export_onnx` calls `expose` on every model with those heads, so a retrained reader
comes with both; `python -m models.cards.heads FILE.onnx...` does it to an existing one.
Needs the `onnx` package (the `train` extra).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

FEATURES = "features"


def heads_file(model: Path) -> Path:
    return model.with_suffix(".heads.npz")


def expose(model: Path) -> bool:
    """Add the `features` output to `model` (in place) and write its heads file. False when
    the graph has no rank and suit heads (the presence model); already exposed is fine."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(model))
    g = m.graph
    init = {i.name: i for i in g.initializer}
    gemm = {n.input[1]: n for n in g.node if n.op_type == "Gemm"}
    if "rank.weight" not in gemm or "suit.weight" not in gemm:
        return False
    feat = gemm["rank.weight"].input[0]
    if gemm["suit.weight"].input[0] != feat:
        raise ValueError(f"{model}: the rank and suit heads read different features")
    # the 0/1 spreads: the MatMuls after each head's LogSoftmax
    after = {n.input[0]: n for n in g.node}
    spread = []
    for head in ("rank", "suit"):
        logsm = after[gemm[f"{head}.weight"].output[0]]
        mm = after[logsm.output[0]]
        if logsm.op_type != "LogSoftmax" or mm.op_type != "MatMul":
            raise ValueError(f"{model}: unexpected graph after the {head} head")
        spread.append(numpy_helper.to_array(init[mm.input[1]]))
    arrays = {k: numpy_helper.to_array(init[k]) for k in
              ("rank.weight", "rank.bias", "suit.weight", "suit.bias")}
    np.savez(heads_file(model), rank_w=arrays["rank.weight"], rank_b=arrays["rank.bias"],
             suit_w=arrays["suit.weight"], suit_b=arrays["suit.bias"],
             rank_spread=spread[0], suit_spread=spread[1])
    if FEATURES not in [o.name for o in g.output]:
        width = arrays["rank.weight"].shape[1]
        g.node.append(helper.make_node("Identity", [feat], [FEATURES], name="features"))
        g.output.append(helper.make_tensor_value_info(FEATURES, onnx.TensorProto.FLOAT,
                                                      ["n", width]))
        onnx.checker.check_model(m)
        onnx.save(m, str(model))
    return True


def main(argv: list[str] | None = None) -> int:
    for path in argv if argv is not None else sys.argv[1:]:
        print(path, "exposed" if expose(Path(path)) else "has no rank and suit heads")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
