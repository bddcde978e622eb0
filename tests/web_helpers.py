"""A short scripted Royal Battles game for the web tests: set-up to a first hit."""

from __future__ import annotations

SETUP = {
    "game": "royal-battles",
    "armies": {"white": ["pawn", "knight", "bishop", "king"],
               "black": ["rook", "queen", "knight", "pawn"]},
    "names": {"white": "Ann", "black": "Bob"},
    "options": {},
}

# Up to white's movement in round 2; the hidden draws (`draw ?`) follow by themselves.
TO_ROUND_2_MOVE = [
    "white setup a1 2H", "white setup c1 3S", "white setup e1 4H", "white setup g1 5S",
    "black setup a5 6H", "black setup c5 7S", "black setup e5 8H", "black setup g5 9S",
    "white place knight c1", "black place knight c5", "white place pawn a1", "black place pawn a5",
    "white place bishop e1", "black place rook e5", "white place king g1", "black place queen g5",
    "white initiative KS", "black initiative 2C",
    "white take-draw", "white move c1-c2 4D",
    "black take-draw", "black move c5-c4 10D",
    "white initiative KH", "black initiative QC",
    "white take-draw",
]
# Then: white's knight moves next to black's knight and attacks it with three royal trumps
# (KH, QC and the movement card JC): risky needs 3 for knight on knight, 7 - 4 armor = 3 damage.
WHITE_MOVE = "white move c2-c3 JC"
WHITE_ATTACK = "white attack c4 risky"
