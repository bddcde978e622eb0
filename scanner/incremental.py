"""Read only what changed: a live frame loop that stays far below the frame interval.

Between two moves the table does not change, and while a hand is over it nothing seen can be
believed. So per frame this stage does three cheap things and one expensive one only where needed:
1. the occlusion detector (`scanner.occlusion`) says whether anything is moving or covering the
   board: then no cell is read at all, and the frame is passed on as occluded;
2. every zone (35 cells, 2 initiative places) is sampled into a tiny grey thumbnail with one
   `cv2.remap` of a half-size frame;
3. a zone whose thumbnail differs from the one it had when last read is read again (card finder,
   card reader, piece classifier on that zone only); the others keep their last reading;
4. a few zones per frame are re-read anyway, so that a change too faint for the thumbnails is
   still caught: first the zones a hand reached while the board was occluded (a flat paper
   token taken off barely changes its zone's thumbnail), then every zone in turn;
5. while the frame is occluded, a zone that changed but lies away from every moving or
   skin-coloured pixel is glimpsed: where no piece stands on its card, the card is passed on
   in `TableReading.glimpses`, never as state. A movement card is laid and then covered by its
   unit, often before the hands leave the board: the glimpse is the one uncovered look.
The result is a full `TableReading` per frame, as `TableScanner.scan` gives, with the stage
timings (`gate` for steps 1-2) added.
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from .detections import CellReading, TableReading
from .occlusion import OcclusionDetector
from .pipeline import TableScanner

THUMB = (10, 8)  # thumbnail columns, rows per zone
CHANGE_LEVELS = 9.0  # mean absolute grey difference (0-255) that means the zone changed
# ... or this much on its 3rd most changed thumbnail pixel: a piece moved off or onto a card
# covers a few thumbnail pixels only (on the 3 fixture videos the mean missed 1 change in 10,
# while every change reached >= 15 here and 99 % of unchanged zone-frames stay under 3)
SPOT_LEVELS = 12.0
REFRESH_PER_FRAME = 2  # zones re-read per settled frame even when unchanged
GLIMPSES_PER_FRAME = 4  # zones glimpsed at most per occluded frame (bounds its latency)
GLIMPSE_MARGIN = 2  # work pixels (1/192 of the frame width) a hand must keep from a glimpse


def board_region(profile) -> np.ndarray:
    """The image polygon of the board and its initiative zones (for occlusion checks)."""
    pts = [profile.cell_card_quad(c) for c in ("a1", "g1", "g5", "a5")]
    pts += [profile.initiative_quad(s) for s in ("white", "black")]
    return cv2.convexHull(np.concatenate(pts).astype(np.float32)).reshape(-1, 2)


class IncrementalScanner:
    @classmethod
    def for_profile(cls, profile, reader=None, pieces=None,
                    presence="default") -> IncrementalScanner:
        """The live loop for a calibrated board: its scanner, with occlusion watched over the
        board and its initiative zones. `presence` is passed to TableScanner (a loaded
        CardPresence to share one, None for the finder's rim test alone)."""
        return cls(TableScanner(profile, reader=reader, pieces=pieces, presence=presence),
                   OcclusionDetector(region=board_region(profile)))

    def __init__(self, scanner: TableScanner, occlusion: OcclusionDetector | None = None,
                 change_levels: float = CHANGE_LEVELS, refresh_per_frame: int = REFRESH_PER_FRAME):
        self.scanner = scanner
        self.occlusion = occlusion
        self.change_levels = change_levels
        self.refresh_per_frame = refresh_per_frame
        self.zones = scanner.zone_names()
        self._map_x, self._map_y = self._thumbnail_maps()
        # each thumbnail pixel averages the box around it, so a piece-sized spot between two
        # sample points still shows (a point sample could miss it altogether)
        step_x = np.median(np.diff(self._map_x, axis=1))
        step_y = np.median(np.abs(np.diff(self._map_y, axis=0)))
        self._box = (max(1, int(round(step_x))), max(1, int(round(step_y))))
        self._reference: np.ndarray | None = None  # thumbnails when each zone was last read
        self._glimpsed: np.ndarray | None = None  # thumbnails when each zone was last glimpsed
        # zones a hand moved over (or a skin-toned change covered) while the board was occluded:
        # the next refresh reads go to them, whatever their thumbnails say (a flat paper token
        # taken off changes a zone's thumbnail too little to be seen as a change)
        self._touched = np.zeros(len(self.zones), bool)
        self._patch_masks: np.ndarray | None = None  # zones x work-scale masks (occlusion)
        self._last: TableReading | None = None
        self._turn = 0

    def _thumbnail_maps(self) -> tuple[np.ndarray, np.ndarray]:
        """For every zone, THUMB sample points across its search patch, as half-frame pixel
        coordinates stacked into one remap grid (zones x rows, columns)."""
        pw, ph, _ = self.scanner._geom
        cols, rows = THUMB
        u = (np.arange(cols) + 0.5) / cols * pw
        v = (np.arange(rows) + 0.5) / rows * ph
        uu, vv = np.meshgrid(u, v)
        pts = np.stack([uu.ravel(), vv.ravel(), np.ones(uu.size)], 1)
        xs, ys = [], []
        for key in self.zones:
            q = pts @ self.scanner._warps[key].T
            xy = q[:, :2] / q[:, 2:3] / 2.0  # the half-size frame
            xs.append(xy[:, 0].reshape(rows, cols))
            ys.append(xy[:, 1].reshape(rows, cols))
        return np.vstack(xs).astype(np.float32), np.vstack(ys).astype(np.float32)

    def thumbnails(self, image: np.ndarray) -> np.ndarray:
        """zones x (rows x cols) grey thumbnails of a BGR frame (float32)."""
        grey = cv2.blur(cv2.cvtColor(cv2.pyrDown(image), cv2.COLOR_BGR2GRAY), self._box)
        t = cv2.remap(grey, self._map_x, self._map_y, cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_REPLICATE)
        return t.reshape(len(self.zones), -1).astype(np.float32)

    def changed(self, thumbs: np.ndarray) -> np.ndarray:
        """Per zone: True where its thumbnail moved away from the one last read."""
        if self._reference is None:
            return np.ones(len(self.zones), bool)
        return self._differs(thumbs, self._reference)

    def _differs(self, thumbs: np.ndarray, before: np.ndarray) -> np.ndarray:
        """Per zone: do two sets of thumbnails differ (NaN, never seen, differs)?"""
        diff = np.nan_to_num(np.abs(thumbs - before), nan=255.0)
        spot = np.partition(diff, diff.shape[1] - 3, axis=1)[:, -3]
        return (diff.mean(1) > self.change_levels) | (spot > SPOT_LEVELS)

    def scan(self, image: np.ndarray) -> TableReading:
        t0 = time.perf_counter()
        profile = self.scanner.profile
        bad = image is None or getattr(image, "ndim", 0) != 3 or image.shape[2] != 3 or \
            tuple(image.shape[1::-1]) != tuple(profile.image_size)
        if bad:  # the full scanner says exactly what is wrong with the frame
            reading = self.scanner.scan(image)
            self._reference = None
            return reading
        occluded = self.occlusion.update(image) if self.occlusion is not None else False
        frame_index = self.scanner.frame_index
        if occluded:
            self.scanner.frame_index += 1
            if self._last is not None:
                reading = self._copy_last(frame_index)
            else:
                reading = TableReading(frame_index=frame_index,
                                       message="something is over the board")
            reading.occluded = True
            self._note_touched()
            reading.timings_ms = {"gate": (time.perf_counter() - t0) * 1000}
            if self._reference is not None:
                reading.glimpses = self._glimpse(image)
                reading.timings_ms["glimpse"] = (time.perf_counter() - t0) * 1000 \
                    - reading.timings_ms["gate"]
            reading.timings_ms["total"] = (time.perf_counter() - t0) * 1000
            return reading
        thumbs = self.thumbnails(image)
        todo = self.changed(thumbs)
        changed = {z for z, d in zip(self.zones, todo, strict=True) if d}
        if self._last is not None:
            # the refresh reads go first to zones a hand reached while the board was occluded,
            # those whose thumbnails moved most first; then round the board in turn (reading
            # every touched zone at once, on top, took the validation games' 95th percentile
            # of CPU time per frame from 26-48 ms to 54-129 ms)
            touched = np.flatnonzero(self._touched & ~todo)
            if len(touched):
                moved = np.nan_to_num(np.abs(thumbs[touched] - self._reference[touched]),
                                      nan=255.0).mean(1)
                touched = touched[np.argsort(-moved, kind="stable")]
            first = touched[:self.refresh_per_frame]
            todo[first] = True
            for _ in range(self.refresh_per_frame - len(first)):
                todo[self._turn % len(self.zones)] = True
                self._turn += 1
        self._touched[todo] = False
        t1 = time.perf_counter()
        zones = {z for z, d in zip(self.zones, todo, strict=True) if d}
        fresh = self.scanner.scan(image, zones=zones if self._last is not None else None)
        if not fresh.board_found and self._last is None:
            return fresh  # nothing on the board yet: keep looking at whole frames
        if self._last is None:
            reading = fresh
        else:
            reading = self._copy_last(frame_index)
            reading.cells.update(fresh.cells)
            for side in ("white", "black"):
                if "init/" + side in zones:
                    reading.initiative.pop(side, None)
                    if side in fresh.initiative:
                        reading.initiative[side] = fresh.initiative[side]
        reading.occluded = occluded
        reading.board_found = True
        reading.changed = changed
        reading.message = fresh.message
        if self._reference is None:
            self._reference = thumbs.copy()
        else:
            self._reference[todo] = thumbs[todo]
        if self._glimpsed is not None:
            self._glimpsed[todo] = np.nan  # read as the table now: the glimpses are done with
        self._last = reading
        reading.timings_ms = {"gate": (t1 - t0) * 1000, **fresh.timings_ms,
                              "zones_read": float(len(zones))}
        reading.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return reading

    def _glimpse(self, image: np.ndarray) -> dict:
        """Bare cards (no piece on them) of an occluded frame at zones that changed since they
        were last read (or glimpsed) and that no hand is near: nothing moving over the zone's
        patch, and nothing skin-coloured in it outside the card found there (red pips can pass
        for skin; a hand over a card reaches beyond it)."""
        occ = self.occlusion
        if occ is None or occ.moving is None or occ.skin is None:
            return {}
        thumbs = self.thumbnails(image)
        if self._glimpsed is None:
            self._glimpsed = np.full_like(thumbs, np.nan)
        new = self.changed(thumbs)
        unlike = self._differs(thumbs, self._glimpsed)
        masks = self._zone_masks(occ)
        still = ~(masks & occ.moving[None]).any(axis=(1, 2))
        todo = np.flatnonzero(new & unlike & still)
        if not len(todo):
            return {}
        order = np.abs(thumbs[todo] - self._reference[todo]).mean(1).argsort()[::-1]
        todo = todo[order[:GLIMPSES_PER_FRAME]]
        zones = {self.zones[i] for i in todo}
        fresh = self.scanner.scan(image, zones=zones, count=False)  # not a frame of its own
        out = {}
        for i in todo:
            zone = self.zones[i]
            cell = fresh.cells.get(zone)
            card = fresh.initiative.get(zone[5:]) if zone.startswith("init/") else \
                getattr(cell, "card", None)
            if card is None:
                continue
            if cell is not None and getattr(cell.piece, "occupied", False) is not False:
                continue  # a card under a piece (or maybe): the settled frame will see as much
            inside = np.zeros(masks.shape[1:], np.uint8)
            cv2.fillPoly(inside, [np.round(card.corners * occ.scale).astype(np.int32)], 1)
            inside = cv2.dilate(inside, np.ones((3, 3), np.uint8)).astype(bool)
            if (occ.skin & masks[i] & ~inside).any():
                continue
            out[zone] = card
            self._glimpsed[i] = thumbs[i]
        return out

    def _note_touched(self) -> None:
        """Mark the zones this occluded frame's moving or skin-toned pixels reach."""
        occ = self.occlusion
        if occ is None or occ.moving is None or occ.skin is None:
            return
        hand = occ.moving | occ.skin
        if hand.any():
            self._touched |= (self._zone_masks(occ) & hand[None]).any(axis=(1, 2))

    def _zone_masks(self, occ: OcclusionDetector) -> np.ndarray:
        """Each zone's search patch on the occlusion detector's work grid, grown by
        GLIMPSE_MARGIN (made once per frame size)."""
        shape = occ.moving.shape
        if self._patch_masks is None or self._patch_masks.shape[1:] != shape:
            pw, ph, _ = self.scanner._geom
            corners = np.array([[0, 0, 1], [pw, 0, 1], [pw, ph, 1], [0, ph, 1]], np.float64)
            grow = np.ones((2 * GLIMPSE_MARGIN + 1,) * 2, np.uint8)
            masks = []
            for key in self.zones:
                q = corners @ self.scanner._warps[key].T
                poly = q[:, :2] / q[:, 2:3] * occ.scale
                m = np.zeros(shape, np.uint8)
                cv2.fillPoly(m, [np.round(poly).astype(np.int32)], 1)
                masks.append(cv2.dilate(m, grow).astype(bool))
            self._patch_masks = np.stack(masks)
        return self._patch_masks

    def _copy_last(self, frame_index: int) -> TableReading:
        last = self._last
        assert last is not None
        out = TableReading(frame_index=frame_index, board_found=True)
        out.cells = {k: CellReading(c.cell, c.empty, c.card, c.piece)
                     for k, c in last.cells.items()}
        out.initiative = dict(last.initiative)
        return out
