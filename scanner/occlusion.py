"""Is anything over the board? Hands and arms must never become game state.

Three cues on a small grey/colour copy of the board area, cheap enough for every frame:
- motion: the mean change from the previous frame;
- sudden change: the share of pixels that differ from the last settled view of the table;
- skin: among the changed pixels, the share that look like skin (YCrCb box), so a hand held
  still over the board is still caught, while a newly laid card (white, not skin) is not.
The last settled view is refreshed only while nothing moves, so a card laid and left becomes
part of it after a few quiet frames; a change that stays perfectly still for longer than a
hand can is taken as the table.

Besides the verdict for the whole board, each frame leaves `moving` and `skin` masks (work
scale: pixels that moved since the previous frame; pixels changed from the settled view that
look like skin), so that a place far from any hand can still be glimpsed
(`scanner.incremental`) while the frame as a whole is not believed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

WORK_WIDTH = 192  # pixels across the downscaled frame


@dataclass
class OcclusionDetector:
    motion_pixel: int = 12  # a pixel moved if it changed this much since the previous frame
    motion_fraction: float = 0.002  # share of moving pixels that means something is moving
    change_threshold: int = 28  # a pixel "changed" from the settled view by more than this
    changed_fraction: float = 0.004  # share of changed pixels worth looking at for skin
    skin_fraction: float = 0.07  # share of changed pixels that look like skin
    quiet_frames: int = 3  # motionless frames before the settled view is refreshed
    # a change that stays perfectly still this long is the table, not a hand (hands tremble);
    # without this, a skin-toned card or table would hold the view "occluded" for ever
    still_limit: int = 5
    region: np.ndarray | None = None  # polygon (N x 2, image px) of board + initiative zones
    _prev: np.ndarray | None = field(default=None, repr=False)
    _settled: np.ndarray | None = field(default=None, repr=False)
    _mask: np.ndarray | None = field(default=None, repr=False)
    _quiet: int = 0
    last: dict = field(default_factory=dict)
    # this frame's moving pixels and skin-coloured changed pixels (work scale); None when the
    # frame gave no picture
    moving: np.ndarray | None = field(default=None, repr=False)
    skin: np.ndarray | None = field(default=None, repr=False)
    scale: float = 1.0  # work pixels per image pixel

    def _prepare(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        h, w = image.shape[:2]
        scale = self.scale = WORK_WIDTH / w
        small = image
        # INTER_AREA is quick at whole-number ratios (960 -> 192) and slow at others: 1280 ->
        # 192 cost 4-7 ms a frame; halved first (an exact 2 x 2 mean), 2-3 ms, the work frame
        # a grey level or so apart (mean 0.17)
        while small.shape[1] % WORK_WIDTH and small.shape[1] >= 4 * WORK_WIDTH \
                and small.shape[0] % 2 == 0 and small.shape[1] % 2 == 0:
            small = cv2.resize(small, (small.shape[1] // 2, small.shape[0] // 2),
                               interpolation=cv2.INTER_AREA)
        small = cv2.resize(small, (WORK_WIDTH, max(1, round(h * scale))),
                           interpolation=cv2.INTER_AREA)
        if self._mask is None or self._mask.shape != small.shape[:2]:
            mask = np.zeros(small.shape[:2], np.uint8)
            if self.region is None:
                mask[:] = 1
            else:
                cv2.fillPoly(mask, [np.round(np.asarray(self.region) * scale).astype(np.int32)],
                             1)
            self._mask = mask.astype(bool)
        return small, cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)

    def update(self, image: np.ndarray) -> bool:
        """Feed one BGR frame; True when hands (or anything moving) are over the board."""
        if image is None or image.ndim != 3 or image.size == 0:
            self.last = {"reason": "no picture"}
            self.moving = self.skin = None
            return True
        small, grey = self._prepare(image)
        mask = self._mask
        area = max(1, int(mask.sum()))
        motion = 0.0
        moved = np.zeros_like(mask)
        if self._prev is not None and self._prev.shape == grey.shape:
            moved = (cv2.absdiff(grey, self._prev) > self.motion_pixel) & mask
            motion = float(moved.sum()) / area
        self._prev = grey
        if self._settled is None or self._settled.shape != grey.shape:
            self._settled = grey
        changed = (cv2.absdiff(grey, self._settled) > self.change_threshold) & mask
        n_changed = int(changed.sum())
        skin = 0.0
        self.moving, self.skin = moved, np.zeros_like(mask)
        if n_changed:
            ycrcb = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
            cr, cb = ycrcb[..., 1], ycrcb[..., 2]
            is_skin = (cr >= 138) & (cr <= 178) & (cb >= 80) & (cb <= 128)
            skin = float((is_skin & changed).sum()) / n_changed
            self.skin = is_skin & changed
        changed_share = n_changed / area
        moving = motion > self.motion_fraction
        self._quiet = 0 if moving else self._quiet + 1
        covered = (changed_share > self.changed_fraction and skin > self.skin_fraction
                   and self._quiet < self.still_limit)
        occluded = moving or covered
        if self._quiet >= self.quiet_frames and not covered:
            self._settled = grey  # the table as it now lies, new cards included
        self.last = {"motion": round(motion, 4), "changed": round(changed_share, 4),
                     "skin": round(skin, 3), "occluded": occluded}
        return occluded
