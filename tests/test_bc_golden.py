"""Battle Cards golden self-play records: seeded games must not change silently.

Regenerate after an intended rules change with:
    BC_REGEN=1 python3 -m pytest -q tests/test_bc_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engines.battle_cards import play_random_game

GOLDEN = Path(__file__).parent / "golden" / "battle_cards" / "selfplay.json"
CASES = [("battle", n, s) for n in (2, 3, 4) for s in (0, 1)] + [
    ("trumps", n, 0) for n in (2, 3, 4)]


def record(mode, players, seed):
    g = play_random_game(seed, players, mode)
    return {"mode": mode, "players": players, "seed": seed, "actions": len(g.history),
            "first_actions": g.history[:8], "last_actions": g.history[-4:],
            "outcome": g.outcome().to_dict()}


def test_seeded_games_match_the_golden_records():
    got = [record(*c) for c in CASES]
    if os.environ.get("BC_REGEN"):
        GOLDEN.write_text(json.dumps(got, indent=1) + "\n")
    assert got == json.loads(GOLDEN.read_text())
