"""Card designs and piece sets: where they come from, the fixed train/held-out split, the cache.

Everything large is built on demand from installed Debian packages into a git-ignored cache
directory (``~/.cache/royal-table/assets``, or ``$ROYAL_TABLE_CACHE``). Nothing here is committed
except the split (``designs.json``) and code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

CARD_W, CARD_H = 250, 350  # raster size of one card face (63 x 88 mm, ~4 px/mm)
SUITS = "CDHS"
RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
ALL_CODES = [r + s for s in SUITS for r in RANKS] + ["JK"]

_HERE = Path(__file__).resolve().parent
SPLIT_FILE = _HERE / "designs.json"

_SUIT_WORD = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
_RANK_WORD = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}


def cache_dir() -> Path:
    """The asset cache: $ROYAL_TABLE_CACHE, else ~/.cache/royal-table/assets."""
    env = os.environ.get("ROYAL_TABLE_CACHE")
    path = Path(env) if env else Path.home() / ".cache" / "royal-table" / "assets"
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class CardDesign:
    name: str
    svg: str  # installed path of the (gzipped) SVG deck
    naming: str  # "aisleriot" (club_king, joker_red) or "kde" (king_club, red_joker)
    package: str
    licence: str
    # a deck that prints no joker: its jokers come from this design, as players at a table
    # take a joker from another deck
    joker_from: str | None = None

    def element_id(self, code: str, joker_colour: str = "red") -> str:
        if code == "back":
            return "back"
        if code == "JK":
            if self.naming == "aisleriot":
                return f"joker_{joker_colour}"
            return f"{joker_colour}_joker"
        rank, suit = code[:-1], code[-1]
        r = _RANK_WORD.get(rank, rank)
        s = _SUIT_WORD[suit]
        return f"{s}_{r}" if self.naming == "aisleriot" else f"{r}_{s}"

    @property
    def installed(self) -> bool:
        return Path(self.svg).exists()


@lru_cache(maxsize=1)
def split() -> dict:
    """The committed split of card designs and piece sets (designs.json)."""
    return json.loads(SPLIT_FILE.read_text())


def designs(which: str = "all") -> list[CardDesign]:
    """Card designs of a split part: "train", "heldout", "spare" (rendered, trained on by no
    committed model) or "all" (train, then held-out)."""
    data = split()
    names = data["cards"]["train"] + data["cards"]["heldout"] if which == "all" else \
        data["cards"][which]
    return [design(name) for name in names]


def design(name: str) -> CardDesign:
    d = split()["cards"]["designs"].get(name)
    if d is None:
        raise KeyError(f"unknown card design {name!r}")
    return CardDesign(name, d["svg"], d["naming"], d["package"], d["licence"],
                      d.get("joker_from"))


def _run_rsvg(args: list[str]) -> None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise RuntimeError("rsvg-convert not found: apt-get install librsvg2-bin")
    subprocess.run([exe, *args], check=True, capture_output=True)


def write_png_atomic(path: Path, img: np.ndarray) -> None:
    """Write a PNG so that a parallel reader never sees half of it."""
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.png")
    if not cv2.imwrite(str(tmp), img):
        raise RuntimeError(f"cannot write {tmp}")
    os.replace(tmp, path)


def from_webp_lossless(buf: np.ndarray, idx: np.ndarray | None = None,
                       val: np.ndarray | None = None) -> np.ndarray:
    """A BGRA image packed by `webp_lossless`: decoded, transparent pixels black (WebP drops
    their colour), then the pixels it got wrong (`idx`, flat; `val`, BGRA) put back."""
    img = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    img[img[:, :, 3] == 0, :3] = 0
    if idx is not None and len(idx):
        img.reshape(-1, 4)[idx] = val
    return img


def webp_lossless(img: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A BGRA image as lossless WebP, and the pixels (flat index, BGRA) that decoding gets
    wrong, so that `from_webp_lossless` gives it back byte for byte (the GPU recipes' packs:
    a machine without rsvg or the Debian piece sets rebuilds the cache from them)."""
    if img.ndim != 3 or img.shape[2] != 4:
        raise ValueError("expected a BGRA image")
    ok, buf = cv2.imencode(".webp", img, [cv2.IMWRITE_WEBP_QUALITY, 101])  # > 100: lossless
    if not ok:
        raise RuntimeError("WebP encoding failed")
    flat = img.reshape(-1, 4)
    diff = np.nonzero((from_webp_lossless(buf).reshape(-1, 4) != flat).any(1))[0]
    return buf, diff.astype(np.int32), flat[diff]


def _fit(img: np.ndarray) -> np.ndarray:
    """Tighten a BGRA crop to its opaque part and scale it to CARD_W x CARD_H."""
    ys, xs = np.nonzero(img[:, :, 3] > 128)
    if len(xs) == 0:
        raise RuntimeError("empty card raster")
    img = img[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    return cv2.resize(img, (CARD_W, CARD_H), interpolation=cv2.INTER_AREA)


def _grid_sheet(d: CardDesign) -> dict[str, np.ndarray]:
    """Aisleriot decks are a 13 x 5 grid: clubs, diamonds, hearts, spades, then black joker,
    red joker and back. Render the whole sheet once and cut it."""
    tmp = cache_dir() / "cards" / f"{d.name}.sheet.{os.getpid()}.png"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    _run_rsvg(["-w", str(13 * (CARD_W + 10)), "-b", "none", d.svg, "-o", str(tmp)])
    sheet = cv2.imread(str(tmp), cv2.IMREAD_UNCHANGED)
    tmp.unlink()
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise RuntimeError(f"rasterising {d.name} failed")
    ys, xs = np.nonzero(sheet[:, :, 3] > 128)
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    cw, ch = (x1 - x0) / 13.0, (y1 - y0) / 5.0
    out: dict[str, np.ndarray] = {}
    names = [[r + s for r in RANKS] for s in SUITS] + [["JK_black", "JK_red", "back"]]
    for row, codes in enumerate(names):
        for col, code in enumerate(codes):
            cx0, cy0 = int(round(x0 + col * cw)), int(round(y0 + row * ch))
            cx1, cy1 = int(round(x0 + (col + 1) * cw)), int(round(y0 + (row + 1) * ch))
            out[code] = _fit(sheet[cy0:cy1, cx0:cx1])
    return out


def _rasterise(d: CardDesign, code: str, joker_colour: str, out: Path) -> None:
    if not d.installed:
        raise RuntimeError(f"{d.svg} not installed: apt-get install {d.package}")
    out.parent.mkdir(parents=True, exist_ok=True)
    if d.naming == "aisleriot":
        for key, img in _grid_sheet(d).items():
            write_png_atomic(out.parent / f"{key}.png", img)
        return
    tmp = out.with_name(f".{out.stem}.{os.getpid()}.svg.png")
    _run_rsvg([f"--export-id={d.element_id(code, joker_colour)}", "-w", str(CARD_W), "-h",
               str(CARD_H), "-b", "none", d.svg, "-o", str(tmp)])
    img = cv2.imread(str(tmp), cv2.IMREAD_UNCHANGED)
    tmp.unlink()
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise RuntimeError(f"rasterising {d.name}/{code} failed")
    write_png_atomic(out, _fit(img))


def card_path(design_name: str, code: str, joker_colour: str = "red") -> Path:
    d = design(design_name)
    if code == "JK" and d.joker_from:
        return card_path(d.joker_from, code, joker_colour)
    key = "JK_" + joker_colour if code == "JK" else code
    path = cache_dir() / "cards" / d.name / f"{key}.png"
    if not path.exists():
        _rasterise(d, code, joker_colour, path)
    return path


@lru_cache(maxsize=4096)
def card_image(design_name: str, code: str, joker_colour: str = "red") -> np.ndarray:
    """One card face (or "back") of a design as a 350x250 BGRA image (alpha 0 outside the card)."""
    img = cv2.imread(str(card_path(design_name, code, joker_colour)), cv2.IMREAD_UNCHANGED)
    img.setflags(write=False)
    return img


def build_card_cache(names: list[str] | None = None, log=print) -> int:
    """Rasterise every card (52 + both jokers + back) of the given designs. Returns the count."""
    n = 0
    for d in designs("all"):
        if names and d.name not in names:
            continue
        if not d.installed:
            log(f"skip {d.name}: {d.svg} missing (apt-get install {d.package})")
            continue
        for code in ALL_CODES[:-1] + ["back"]:
            card_path(d.name, code)
            n += 1
        for colour in ("red", "black"):
            card_path(d.name, "JK", colour)
            n += 1
        log(f"cards: {d.name} done")
    return n
