"""Fine-tuning the committed card readers on what the board scanner really shows them.

`royal-table train cards --scenes N` starts from the committed `card_index.onnx` and
`card_face.onnx` (their weights are read back from the ONNX files, so the step needs nothing
outside the repo) and trains both a few epochs on crops of rendered table stills
(`models.cards.scenes`: training decks, the board finder's own quads) mixed with as many of the
synthetic crops they were trained on, so photos of loose cards are not forgotten. Batch-norm
statistics stay frozen (the ONNX export folded them into the convolutions).

Temperatures and thresholds are then picked on two validation sets of the validation decks, the
synthetic one of `train.py` and rendered stills, and the stricter threshold of the two is kept:
answers at or above it are at least 99.9 % right on both. The held-out designs stay with
`royal-table cards bench`.

Needs the 'train' extra (torch CPU, onnx); runtime never imports this module.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np

from models.cards import face as face_recipe
from models.cards import scenes
from models.cards import train as index_recipe
from models.cards.dataset import NONE, PROCEDURAL
from scanner.rectify import CROP_H, CROP_W, normalise

HERE = Path(__file__).resolve().parent
SCENE_SEED = 7_100_000  # training stills' seeds start here
VAL_SCENE_SEED = 7_000_000  # validation stills (validation decks)


def load_onnx_weights(model, path: Path, log=print) -> None:
    """Put an exported reader's weights back into a fresh torch model of the same shape. The
    export folded each batch norm into the convolution before it: the convolutions take the
    folded weights and biases, the batch norms become the identity (and must stay frozen)."""
    import onnx
    import torch
    from onnx import numpy_helper

    init = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    convs = [m for m in model.trunk if isinstance(m, torch.nn.Conv2d)]
    norms = [m for m in model.trunk if isinstance(m, torch.nn.BatchNorm2d)]
    folded = [(k, v) for k, v in init.items() if k.startswith("onnx::Conv_")]
    folded.sort(key=lambda kv: int(kv[0].split("_")[-1]))
    if len(folded) != 2 * len(convs):
        raise ValueError(f"{path}: expected {len(convs)} folded convolutions, "
                         f"found {len(folded) // 2}")
    state = model.state_dict()
    with torch.no_grad():
        for conv, bn, (_, w), (_, b) in zip(convs, norms, folded[0::2], folded[1::2],
                                            strict=True):
            conv.weight.copy_(torch.from_numpy(np.array(w)))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(np.array(b)))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        for k, v in init.items():
            if k in state:
                state[k].copy_(torch.from_numpy(np.array(v)))
    log(f"  starting from {path.name}")


def freeze_norms(model) -> None:
    """Training mode everywhere but the batch norms, which keep their (folded) statistics."""
    import torch

    model.train()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()
            for p in m.parameters():
                p.requires_grad_(False)


def _answered(name: str, pred: np.ndarray, truth: np.ndarray, conf: np.ndarray,
              threshold: float) -> dict[str, float]:
    """Card accuracy, the share answered at `threshold` and how many of those are right."""
    answered = conf >= threshold
    return {f"{name}_card_accuracy": float((pred == truth).mean()),
            f"{name}_answered": float(answered.mean()),
            f"{name}_answered_precision": float((pred[answered] == truth[answered]).mean())
            if answered.any() else 0.0}


def _epochs(model, X, R, S, pools: list[tuple[np.ndarray, int]], epochs: int, lr: float,
            seed: int, augment=None, log=print, val=None) -> None:
    """`pools`: (indices into X, how many of them each epoch sees)."""
    import torch

    from models.cards.train import fit_epoch

    per_epoch = sum(n for _, n in pools)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr,
                            weight_decay=1e-4)
    steps = max(1, epochs * ((per_epoch + 255) // 256))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps,
                                                pct_start=0.15)
    g = torch.Generator().manual_seed(seed)
    for ep in range(epochs):
        freeze_norms(model)
        t = time.time()
        chosen = torch.cat([torch.from_numpy(ix)[torch.randperm(len(ix), generator=g)[:n]]
                            for ix, n in pools])
        perm = chosen[torch.randperm(len(chosen), generator=g)]
        loss = fit_epoch(model, opt, sched, X, R, S, perm, augment=augment)
        log(f"  epoch {ep + 1}/{epochs}: loss {loss:.4f}{val() if val else ''} "
            f"({time.time() - t:.0f}s)")


def _finetune_index(tr: dict, val: dict, Xv, recipe: dict, workers: int, start: Path, out: Path,
                    log=print, augment: bool = False) -> tuple[float, dict]:
    """Fine-tune the index reader on the scene crops `tr` (and as many of its synthetic ones);
    write it with its temperature and threshold to `out`. `augment`: each crop a fresh look
    every epoch (`train.augment_index`). Returns (temperature, figures)."""
    import torch

    from scanner.card_reader import softmax

    xs, ys = scenes.flat_crops(tr)
    epochs, lr, seed = recipe["epochs"], recipe["lr"], recipe["seed"]
    xm, ym, _ = index_recipe.training_mix(seed, 24000, workers, log)  # its original data
    x = np.concatenate([xs, xm])
    y = np.concatenate([ys, ym])
    del xm
    X = torch.from_numpy(np.concatenate([normalise(x[i:i + 20000])
                                         for i in range(0, len(x), 20000)]))
    del x
    rank, suit = index_recipe.factor_labels(y)
    R, S = torch.from_numpy(rank), torch.from_numpy(suit)
    n_s = len(ys)
    scene_index = np.nonzero(ys != NONE)[0]
    scene_blank = np.nonzero(ys == NONE)[0]
    mix_index = n_s + np.nonzero(ym != NONE)[0]
    mix_blank = n_s + np.nonzero(ym == NONE)[0]
    pools = [(scene_index, len(scene_index)), (scene_blank, len(scene_blank) // 2),
             (mix_index, len(scene_index)), (mix_blank, len(scene_blank) // 3)]
    log(f"index reader: {len(scene_index)} scene index crops, {len(scene_blank)} scene blanks, "
        f"{len(mix_index)} synthetic index crops; {sum(n for _, n in pools)} per epoch")
    vy = val["face_labels"]

    def val_index() -> str:
        p = softmax(index_recipe.logits_of(model, Xv)).reshape(len(vy), 4, -1)
        pred, _ = index_recipe.decide_cards(p)
        return f", scene val card accuracy {float((pred == vy).mean()):.4f}"

    model = index_recipe.make_model()
    load_onnx_weights(model, start / "card_index.onnx", log)
    log("  before" + val_index())
    _epochs(model, X, R, S, pools, epochs, lr, seed, log=log, val=val_index,
            augment=index_recipe.augment_index(torch.Generator().manual_seed(seed + 2))
            if augment else None)
    del X
    index_recipe.export_onnx(model, (CROP_H, CROP_W), out / "card_index.onnx", "crops")
    index_meta = json.loads((start / "card_index.json").read_text())
    # temperature and threshold: the synthetic validation cards and the scene ones
    xva, yva = index_recipe.build_data(seed + 1, 3000, index_recipe.VAL_DESIGNS, workers, log)
    lv_syn = index_recipe.logits_of(model, torch.from_numpy(normalise(xva)))
    lv_scene = index_recipe.logits_of(model, Xv)
    keep = val["labels"].reshape(-1) != scenes.DROP
    T = index_recipe.fit_temperature(np.concatenate([lv_syn, lv_scene[keep]]),
                                     np.concatenate([yva, val["labels"].reshape(-1)[keep]]))
    thr_syn, stats = index_recipe.pick_threshold(softmax(lv_syn / T), yva)
    pred, conf = index_recipe.decide_cards(softmax(lv_scene / T).reshape(len(vy), 4, -1))
    thr_scene = index_recipe.threshold_at_precision(conf, pred == vy)
    thr = max(thr_syn, thr_scene)
    stats.update({"threshold_synthetic": thr_syn, "threshold_scenes": thr_scene,
                  **_answered("val_scene", pred, vy, conf, thr)})
    index_meta.update({"temperature": T, "threshold": thr, "finetune": {
        "from": "card_index.onnx (previous commit)", **recipe}, **stats})
    (out / "card_index.json").write_text(json.dumps(index_meta, indent=1) + "\n")
    log(f"index: temperature {T:.3f}, threshold {thr:.6f} (synthetic {thr_syn:.6f}, scenes "
        f"{thr_scene:.6f}), {stats}")
    return T, stats


def finetune(stills: int = 2400, val_stills: int = 300, epochs: int = 4, lr: float = 1e-3,
             face_epochs: int = 4, seed: int = 7, workers: int = 2, threads: int = 2,
             out: Path = HERE, start: Path = HERE, index: bool = True, face: bool = True,
             augment: bool = False, log=print) -> dict:
    """Fine-tune both readers on scene crops (or only the whole-card reader: `index=False`; or
    only the index reader: `face=False`, the whole-card reader is then copied and its fused
    threshold picked again beside the new index reader); write them, their temperatures and
    thresholds to `out`. `augment`: the index reader sees each crop afresh every epoch.
    Returns the validation figures."""
    import torch

    from scanner.card_reader import softmax

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    out.mkdir(parents=True, exist_ok=True)
    decks = index_recipe.training_decks()
    val = scenes.build(VAL_SCENE_SEED, val_stills, index_recipe.VAL_DESIGNS, workers, log)
    tr = scenes.build(SCENE_SEED, stills, decks, workers, log)
    figures: dict = {"scene_stills": stills, "val_scene_stills": val_stills,
                     "scene_cards": int(len(tr["face_labels"])),
                     "val_scene_cards": int(len(val["face_labels"]))}

    # -- the index reader
    val_crops = val["crops"].reshape(-1, CROP_H, CROP_W, 3)
    Xv = torch.from_numpy(normalise(val_crops))
    vy = val["face_labels"]
    recipe = {"scene_stills": stills, "val_scene_stills": val_stills, "epochs": epochs,
              "lr": lr, "seed": seed, "augment": augment}
    if index:
        T, figures["index"] = _finetune_index(tr, val, Xv, recipe, workers, start, out, log,
                                              augment=augment)
    else:  # the index reader stays as it is, with its temperature and threshold
        for name in ("card_index.onnx", "card_index.json"):
            if (start / name).resolve() != (out / name).resolve():
                shutil.copyfile(start / name, out / name)
        T = float(json.loads((start / "card_index.json").read_text())["temperature"])
    model = index_recipe.make_model()
    load_onnx_weights(model, out / "card_index.onnx", lambda *_: None)
    lv_scene = index_recipe.logits_of(model, Xv)

    # -- the whole-card reader
    FV = torch.from_numpy(normalise(val["faces"]))
    g = torch.Generator().manual_seed(seed)
    fmodel = index_recipe.make_model((face_recipe.FACE_SIZE[1], face_recipe.FACE_SIZE[0]))

    def val_face() -> str:
        lf = index_recipe.logits_of(fmodel, FV)
        return f", scene val face accuracy {float((lf.argmax(1) == vy).mean()):.4f}"

    load_onnx_weights(fmodel, start / "card_face.onnx", log)
    if face:
        fa, fya = face_recipe.face_data(11, 40000, decks, log, workers=workers)  # its own,
        fa, fya = fa[:12000], fya[:12000]  # the first 12,000 of them
        fb, fyb = face_recipe.face_data(111, 20000, [PROCEDURAL], log, workers=workers)
        fx = np.concatenate([tr["faces"], fa, fb])
        fy = np.concatenate([tr["face_labels"], fya, fyb])
        FX = torch.from_numpy(normalise(fx))
        frank, fsuit = index_recipe.factor_labels(fy)
        n_f = len(tr["faces"])
        fpools = [(np.arange(n_f), n_f), (n_f + np.arange(len(fx) - n_f), n_f)]
        log(f"whole-card reader: {n_f} scene cards + as many synthetic each epoch")
        log("  before" + val_face())
        _epochs(fmodel, FX, torch.from_numpy(frank), torch.from_numpy(fsuit), fpools,
                face_epochs, lr, seed + 1, augment=face_recipe.either_end_up(g), log=log,
                val=val_face)
        index_recipe.export_onnx(fmodel, (face_recipe.FACE_SIZE[1], face_recipe.FACE_SIZE[0]),
                                 out / "card_face.onnx", "cards")
    elif (start / "card_face.onnx").resolve() != (out / "card_face.onnx").resolve():
        shutil.copyfile(start / "card_face.onnx", out / "card_face.onnx")
    fxv, fyv = face_recipe.face_data(12, 3000, index_recipe.VAL_DESIGNS, log, workers=workers)
    lf_syn = index_recipe.logits_of(fmodel, torch.from_numpy(normalise(fxv)))
    lf_scene = index_recipe.logits_of(fmodel, FV)
    fT = index_recipe.fit_temperature(np.concatenate([lf_syn, lf_scene]),
                                      np.concatenate([fyv, vy]))
    face_meta = json.loads((start / "card_face.json").read_text())
    if face:
        face_meta["finetune"] = {**recipe, "epochs": face_epochs, "augment": False}
    face_meta.update({"temperature": fT,
                      "val_face_accuracy": float((lf_syn.argmax(1) == fyv).mean()),
                      "val_scene_face_accuracy": float((lf_scene.argmax(1) == vy).mean())})
    (out / "card_face.json").write_text(json.dumps(face_meta, indent=1) + "\n")
    # the fused threshold: synthetic pairs (face.calibrate) and scene cards the reader fuses
    face_meta = face_recipe.calibrate(out, seed=13, n_val=3000, threads=threads, log=log)
    small = val["widths"] < face_recipe.FACE_BELOW_PX
    pi = softmax(lv_scene / T).reshape(len(vy), 4, -1)[small]
    pf = softmax(lf_scene / fT)[small]
    pred, conf = index_recipe.decide_cards(pi, pf)
    thr_scene = index_recipe.threshold_at_precision(conf, pred == vy[small], fallback=0.999999)
    fthr = max(face_meta["fused_threshold"], thr_scene)
    fstats = {"fused_threshold_synthetic": face_meta["fused_threshold"],
              "fused_threshold_scenes": thr_scene,
              **_answered("val_scene_fused", pred, vy[small], conf, fthr)}
    face_meta.update({"fused_threshold": fthr, **fstats})
    (out / "card_face.json").write_text(json.dumps(face_meta, indent=1) + "\n")
    log(f"whole card: temperature {fT:.3f}, fused threshold {fthr:.6f}, {fstats}")
    figures["face"] = fstats
    return figures
