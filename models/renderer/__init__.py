"""The table renderer: synthetic, truth-labelled stills and videos of a Royal Battles table.

Public API (what the recognition work uses):
- ``render_scene(position, scene, hands=None) -> RenderResult(image, truth, masks)``
- ``Scene.random(seed, split="train"|"heldout", designs=None, piece_sets=None)``
- ``card_image(design, code) -> BGRA ndarray`` (350 x 250), ``designs(split)``
- ``Hand`` (an arm over the table), ``build_assets()`` (fill the asset cache)
"""

from __future__ import annotations

from .assets import ALL_CODES, card_image, designs, split
from .render import Hand, RenderResult, render_scene
from .scene import Scene


def build_assets(log=print) -> int:
    """Rasterise every card design and pre-render every piece sprite into the cache."""
    from .assets import build_card_cache
    from .pieces import build_sprite_cache

    return build_card_cache(log=log) + build_sprite_cache(log=log)


__all__ = ["ALL_CODES", "Hand", "RenderResult", "Scene", "build_assets", "card_image",
           "designs", "render_scene", "split"]
